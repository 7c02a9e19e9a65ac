#include "graph/size_constraint.h"

#include <cctype>
#include <string_view>

#include "loom/support/error.h"

namespace loom::graph {

bool SizeConstraint::Holds(int64_t size) const {
  const int64_t x = modulus > 0 ? ((size % modulus) + modulus) % modulus : size;
  if (op == "==") return x == value;
  if (op == "<") return x < value;
  if (op == "<=") return x <= value;
  if (op == ">") return x > value;
  return x >= value;
}

SizeConstraint ParseSizeConstraint(const std::string& text) {
  size_t at = 0;
  auto fail = [&](const std::string& why) {
    LOOM_THROW << "size constraint '" << text << "': " << why
               << "; expected NAME OP N or NAME % M OP N, OP one of ==, <, <=, >, >= (for "
               << "example 'seq % 8 == 0' or 'seq <= 512')";
  };
  auto skip_spaces = [&] {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
  };
  auto number = [&](const char* what) {
    skip_spaces();
    size_t begin = at;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
    if (at == begin || at - begin > 18) fail(std::string("no ") + what);
    return std::stoll(text.substr(begin, at - begin));
  };
  SizeConstraint c;
  skip_spaces();
  size_t begin = at;
  // A name is whatever comes before a space or the operator (ONNX's dim_params may hold
  // any character: "batch-size", "onnx::Shape_0").
  while (at < text.size() && !std::isspace(static_cast<unsigned char>(text[at])) &&
         std::string_view("%<>=").find(text[at]) == std::string_view::npos) {
    ++at;
  }
  if (at == begin) fail("no size variable's name");
  c.var = text.substr(begin, at - begin);
  skip_spaces();
  if (at < text.size() && text[at] == '%') {
    ++at;
    c.modulus = number("modulus");
    if (c.modulus < 1) fail("the modulus must be at least 1");
    skip_spaces();
  }
  for (const char* op : {"==", "<=", ">=", "<", ">"}) {
    if (text.compare(at, std::char_traits<char>::length(op), op) == 0) {
      c.op = op;
      at += c.op.size();
      break;
    }
  }
  if (c.op.empty()) fail("no comparison");
  c.value = number("value to compare with");
  skip_spaces();
  if (at != text.size()) fail("'" + text.substr(at) + "' after the constraint");
  c.text = c.var + (c.modulus > 0 ? " % " + std::to_string(c.modulus) : "") + " " + c.op + " " +
           std::to_string(c.value);
  return c;
}

}  // namespace loom::graph
