// Base64 (RFC 4648, with padding): bytes kept inside JSON text (a near
// copy's pixels in its decision's details) and data: URIs (the gallery).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace winnow::curation {

std::string base64_encode(const std::uint8_t* bytes, std::size_t size);
// Empty when `text` is not base64.
std::optional<std::vector<std::uint8_t>> base64_decode(std::string_view text);

}  // namespace winnow::curation
