// Owns opening a package safely: every check a loader must make before trusting any byte, in
// an order that gives the most useful message (each names the check that failed):
//   1. size and identifier ("not a fuserc package" for foreign files),
//   2. the trailer ("truncated"; a newer layout is "written by a newer fuserc"),
//   3. the head checksum (every byte but the blobs),
//   4. the FlatBuffers verifier (structure) and the format version,
//   5. internal consistency (every index and slot in range, the program in order).
// Only the head is read from disk when a package is opened: each blob (a cubin, the PTX, a
// source) is read and checked against its hash when first used, so loading costs
// microseconds whatever the package's size. verify_all() reads and checks every blob.
// Depends on fuserc_base and the generated schema only: no compiler layer.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "fuserc/fuserc_package_generated.h"

namespace fuserc {

class PackageView {
 public:
  // Reads the head of a package file (the blobs are read when used; the file stays open).
  static std::unique_ptr<PackageView> open_file(const std::string& path);
  // A package held in memory: copied, or borrowed (the caller keeps the bytes alive and
  // unchanged for the view's lifetime, e.g. a package embedded in a program).
  static std::unique_ptr<PackageView> from_bytes(std::string bytes, const std::string& name);
  static std::unique_ptr<PackageView> view_bytes(const uint8_t* data, size_t size,
                                                 const std::string& name);
  ~PackageView();
  PackageView(const PackageView&) = delete;
  PackageView& operator=(const PackageView&) = delete;

  const fb::Metadata& metadata() const { return *metadata_; }
  const std::string& name() const { return name_; }  // the file, for messages
  size_t size() const { return size_; }

  // The bytes of a blob, read and verified against its hash the first time (UserError if
  // corrupted or unreadable). `what` names it in messages ("sm_80 cubin of kernel k0").
  std::string_view blob(const fb::BlobRef& ref, const std::string& what) const;
  // Reads and hashes every blob (and the metadata once more).
  void verify_all() const;
  // The bytes of a constant, verified against its hash when first used.
  std::string_view constant_data(const fb::Constant& c) const;

 private:
  PackageView() = default;
  void open(size_t already_read);
  void check_consistency() const;
  void read_range(size_t offset, size_t length) const;
  [[noreturn]] void corrupted(const std::string& what) const;

  std::string name_;
  int fd_ = -1;                         // open_file: read blobs from here
  std::unique_ptr<uint8_t[]> storage_;  // open_file: the file's bytes (blobs filled on use)
  std::string owned_;                   // from_bytes
  std::unique_ptr<uint64_t[]> aligned_metadata_;  // a copy when the metadata is misaligned
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t blob_offset_ = 0, blob_size_ = 0;
  const fb::Package* package_ = nullptr;
  const fb::Metadata* metadata_ = nullptr;
  // Blobs already read and verified, by offset.
  std::vector<uint64_t> blob_offsets_;
  mutable std::unique_ptr<std::atomic<bool>[]> verified_;
  mutable std::mutex mutex_;
};

}  // namespace fuserc
