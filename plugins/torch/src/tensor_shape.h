// Tensor shapes as text, for error messages (fmt cannot format tensors).
#pragma once

#include <sstream>
#include <string>

#include <ATen/ATen.h>

namespace winnow::detail {

inline std::string shape_of(const at::Tensor& tensor) {
  if (!tensor.defined()) return "undefined";
  std::ostringstream out;
  out << tensor.sizes();
  return out.str();
}

}  // namespace winnow::detail
