#include "core/base/constant_data.h"

#include "core/base/content_hash.h"
#include "core/base/mapped_file.h"

namespace fuserc {

std::shared_ptr<const ConstantData> ConstantData::from_bytes(std::string bytes,
                                                             std::string source) {
  std::shared_ptr<ConstantData> c(new ConstantData());
  c->owned_ = std::move(bytes);
  c->data_ = c->owned_.data();
  c->size_ = c->owned_.size();
  c->source_ = std::move(source);
  return c;
}

std::shared_ptr<const ConstantData> ConstantData::mapped(std::shared_ptr<const MappedFile> file,
                                                         uint64_t offset, uint64_t size,
                                                         std::string source) {
  std::shared_ptr<ConstantData> c(new ConstantData());
  c->data_ = reinterpret_cast<const char*>(file->data()) + offset;
  c->size_ = size;
  c->file_ = file->path();
  c->mapped_ = std::move(file);
  c->source_ = std::move(source);
  return c;
}

uint64_t ConstantData::hash() const {
  std::call_once(hashed_, [this] { hash_ = content_hash64(data_, size_); });
  return hash_;
}

}  // namespace fuserc
