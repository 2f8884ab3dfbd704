// Owns opening a package safely: every check a loader must make before trusting any byte, in
// an order that gives the most useful message (each names the check that failed):
//   1. size and identifier ("not a fuserc package" for foreign files),
//   2. the trailer ("truncated"; a newer layout is "written by a newer fuserc"),
//   3. the head checksum (every byte before the external data but the blobs),
//   4. the FlatBuffers verifier (structure) and the format version,
//   5. internal consistency (every index and slot in range, the program in order, every
//      constant's data where its shape says).
// Only the head is read from disk when a package is opened: each blob (a cubin, the PTX, a
// source, a small constant) is read and checked against its hash when first used, and the
// external data section (large constants) is not read, copied or mapped until a constant in it
// is asked for, so loading costs microseconds whatever the package's size. verify_all() reads
// and checks everything.
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
  // Reads the head of a package file (blobs and external data are read when used; the file
  // stays open).
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

  // The bytes of a constant of this package's metadata, without a copy: an external constant
  // of a file through a read-only mapping of the external section (made once, on first use),
  // of bytes in memory a view into them, an inline one as blob() gives it. Checked against its
  // hash the first time; a mismatch is a UserError "corrupted package: the data of constant
  // 'NAME' does not match its hash". Valid as long as the view.
  std::string_view constant_data(const fb::Constant& c) const;
  // Whether constant_data(c) starts at a multiple of kExternalAlignment (256 bytes) in memory,
  // computed without reading or mapping anything. Always true for external constants of files
  // (mapped at a page boundary); bytes in memory may not be, and inline constants rarely are:
  // a caller that needs alignment copies them.
  bool constant_data_aligned(const fb::Constant& c) const;

  // Reads and hashes every blob and constant (and the metadata once more), and checks that the
  // padding between external pieces is zero.
  void verify_all() const;

 private:
  // A blob or external piece, identified by its whole BlobRef (two refs at one offset but of
  // different sizes are checked separately).
  struct RefKey {
    uint64_t offset, size, hash;
    bool operator<(const RefKey& o) const;
    bool operator==(const RefKey& o) const;
  };
  // Refs checked once, each with a flag set when it has been.
  struct CheckedRefs {
    std::vector<RefKey> keys;  // sorted, unique
    std::unique_ptr<std::atomic<bool>[]> done;
    void build();
    std::atomic<bool>& flag(const fb::BlobRef& ref) const;
  };

  PackageView() = default;
  // Steps 1 and 2 (identifier, trailer) from the file's first min(size, 8) bytes `first` and
  // the `tail_available` bytes before `tail_end` (the end of the file).
  void check_frame(const uint8_t* first, const uint8_t* tail_end, size_t tail_available);
  // Reads the rest of the head (files), then steps 3 to 5.
  void open_head(size_t resident);
  void check_consistency(uint32_t version) const;
  void check_constants(uint32_t version) const;
  void read_range(size_t offset, size_t length) const;
  // The start of the external section in memory (a file's is mapped on the first call).
  const uint8_t* external_data() const;
  std::string_view external_piece(const fb::BlobRef& ref, const std::string& name) const;
  void check_external_padding() const;
  [[noreturn]] void corrupted(const std::string& what) const;

  std::string name_;
  int fd_ = -1;                         // open_file: read blobs and map external data from here
  std::unique_ptr<uint8_t[]> storage_;  // open_file: the head's bytes (blobs filled on use)
  std::string owned_;                   // from_bytes
  std::unique_ptr<uint64_t[]> aligned_metadata_;  // a copy when the metadata is misaligned
  const uint8_t* data_ = nullptr;                 // the head: FlatBuffer and padding
  size_t size_ = 0;                               // the whole file
  size_t head_size_ = 0;                          // where the external section or trailer starts
  size_t blob_offset_ = 0, blob_size_ = 0;
  size_t external_offset_ = 0, external_size_ = 0;  // in the file
  uint64_t head_hash_ = 0;
  bool old_trailer_ = false;  // FZPKEND1 (format versions 1 and 2)
  const fb::Package* package_ = nullptr;
  const fb::Metadata* metadata_ = nullptr;
  CheckedRefs blobs_;     // in blob_data, read under mutex_
  CheckedRefs external_;  // in the external section, checked under external_mutex_
  mutable std::mutex mutex_;
  // The external section in memory: the caller's bytes, or (files) the mapping once made.
  mutable std::atomic<const uint8_t*> external_data_{nullptr};
  mutable void* mapping_ = nullptr;
  mutable size_t mapping_size_ = 0;
  mutable std::mutex external_mutex_;
};

}  // namespace fuserc
