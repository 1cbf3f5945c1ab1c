// Reading StableHLO program text in error messages.
#pragma once
#include <string>

namespace torch_tpu::eager {

// The line of `text` holding position `pos`, without its indentation.
inline std::string line_at(const std::string& text, size_t pos) {
  size_t begin = text.rfind('\n', pos);
  begin = begin == std::string::npos ? 0 : begin + 1;
  size_t end = text.find('\n', pos);
  std::string line = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  size_t first = line.find_first_not_of(' ');
  return first == std::string::npos ? line : line.substr(first);
}

}  // namespace torch_tpu::eager
