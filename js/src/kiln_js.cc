#include "kiln_js.h"

#include <cstddef>
#include <string>

#include "kiln/kiln_c.h"

namespace {

// The description kiln_js_layout returns, built once.
std::string Describe() {
  std::string out;
  const auto size = [&out](const char* name, std::size_t value) {
    out += name;
    out += '=';
    out += std::to_string(value);
    out += ';';
  };
#define KILN_JS_FIELD(T, f) size(#T "." #f, offsetof(T, f))
  size("kiln_error", sizeof(kiln_error));
  KILN_JS_FIELD(kiln_error, struct_size);
  KILN_JS_FIELD(kiln_error, error_class);
  KILN_JS_FIELD(kiln_error, rule);
  KILN_JS_FIELD(kiln_error, offset);
  KILN_JS_FIELD(kiln_error, tensor);
  KILN_JS_FIELD(kiln_error, message_truncated);
  KILN_JS_FIELD(kiln_error, message_length);
  KILN_JS_FIELD(kiln_error, message);
  size("kiln_options", sizeof(kiln_options));
  KILN_JS_FIELD(kiln_options, struct_size);
  KILN_JS_FIELD(kiln_options, mode);
  KILN_JS_FIELD(kiln_options, max_tensors);
  KILN_JS_FIELD(kiln_options, max_name_bytes);
  KILN_JS_FIELD(kiln_options, max_block_bytes);
  size("kiln_header", sizeof(kiln_header));
  KILN_JS_FIELD(kiln_header, struct_size);
  KILN_JS_FIELD(kiln_header, flags);
  KILN_JS_FIELD(kiln_header, tensor_count);
  KILN_JS_FIELD(kiln_header, name_bytes);
  KILN_JS_FIELD(kiln_header, has_names);
  KILN_JS_FIELD(kiln_header, payload_bytes);
  KILN_JS_FIELD(kiln_header, directory_bytes);
  KILN_JS_FIELD(kiln_header, payload_base);
  KILN_JS_FIELD(kiln_header, block_length);
  size("kiln_tensor", sizeof(kiln_tensor));
  KILN_JS_FIELD(kiln_tensor, struct_size);
  KILN_JS_FIELD(kiln_tensor, index);
  KILN_JS_FIELD(kiln_tensor, dtype);
  KILN_JS_FIELD(kiln_tensor, dtype_name);
  KILN_JS_FIELD(kiln_tensor, name);
  KILN_JS_FIELD(kiln_tensor, name_length);
  KILN_JS_FIELD(kiln_tensor, rank);
  KILN_JS_FIELD(kiln_tensor, shape);
  KILN_JS_FIELD(kiln_tensor, element_count);
  KILN_JS_FIELD(kiln_tensor, byte_offset);
  KILN_JS_FIELD(kiln_tensor, byte_length);
  KILN_JS_FIELD(kiln_tensor, block_offset);
  KILN_JS_FIELD(kiln_tensor, payload);
  KILN_JS_FIELD(kiln_tensor, layout);
  KILN_JS_FIELD(kiln_tensor, layout_length);
  KILN_JS_FIELD(kiln_tensor, block_size);
  KILN_JS_FIELD(kiln_tensor, quant_scheme);
  KILN_JS_FIELD(kiln_tensor, quant_axis);
  KILN_JS_FIELD(kiln_tensor, quant_group_size);
  KILN_JS_FIELD(kiln_tensor, quant_scale_index);
  KILN_JS_FIELD(kiln_tensor, quant_outer_index);
#undef KILN_JS_FIELD
  size("pointer", sizeof(void*));
  size("size_t", sizeof(std::size_t));
  size("KILN_MESSAGE_CAPACITY", KILN_MESSAGE_CAPACITY);
  size("KILN_NO_TENSOR", KILN_NO_TENSOR);
  size("KILN_MAX_RANK", KILN_MAX_RANK);
  return out;
}

}  // namespace

extern "C" const char* kiln_js_layout(void) {
  static const std::string layout = Describe();
  return layout.c_str();
}
