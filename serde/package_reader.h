// Owns opening a package safely: every check a loader must make before trusting any byte, in
// an order that gives the most useful message (each names the check that failed):
//   1. size and identifier ("not a fuserc package" for foreign files),
//   2. the trailer ("truncated"),
//   3. the FlatBuffers verifier (structure),
//   4. the format version ("written by a newer fuserc"),
//   5. the head checksum (every byte but the blobs),
//   6. internal consistency (every index and slot in range, the program in order).
// Blobs (cubins, PTX, sources) are hashed when first used, so loading costs microseconds
// whatever the package's size; verify_all() checks them all at once.
// Depends on fuserc_base and the generated schema only: no compiler layer.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/mapped_file.h"
#include "fuserc/fuserc_package_generated.h"

namespace fuserc {

class PackageView {
 public:
  static std::unique_ptr<PackageView> open_file(const std::string& path);
  // For tests and embedding: a package held in memory (copied).
  static std::unique_ptr<PackageView> from_bytes(std::string bytes, const std::string& name);

  const fb::Metadata& metadata() const { return *metadata_; }
  const std::string& name() const { return name_; }  // the file, for messages
  size_t size() const { return size_; }

  // The bytes of a blob, verified against its hash the first time (UserError if corrupted).
  std::string_view blob(const fb::BlobRef& ref, const std::string& what) const;
  // Hashes every blob (and the metadata once more).
  void verify_all() const;

 private:
  PackageView() = default;
  void check();
  void check_consistency() const;
  [[noreturn]] void corrupted(const std::string& what) const;

  std::string name_;
  std::string owned_;                   // from_bytes
  std::unique_ptr<MappedFile> mapped_;  // open_file
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  const fb::Package* package_ = nullptr;
  const fb::Metadata* metadata_ = nullptr;
  const uint8_t* blob_data_ = nullptr;
  size_t blob_size_ = 0;
  mutable std::vector<std::atomic<bool>> verified_;  // per blob offset index, see blob()
  mutable std::vector<uint64_t> verified_offsets_;
};

}  // namespace fuserc
