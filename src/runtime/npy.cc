// NumPy .npy reading and writing for NDArray. The format: the magic "\x93NUMPY", a major and
// minor version byte, the header length (2 bytes little-endian in version 1, 4 bytes in
// versions 2 and 3), then a Python dict literal with 'descr', 'fortran_order' and 'shape',
// padded with spaces and a newline, then the raw elements.
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "loom/runtime/ndarray.h"
#include "loom/support/error.h"
#include "loom/support/file.h"

namespace loom::runtime {

static_assert(std::endian::native == std::endian::little,
              ".npy support assumes a little-endian host: element bytes are copied unchanged");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// numpy pads the header so the data starts on a 64-byte boundary.
constexpr size_t kHeaderAlignment = 64;

struct DescrEntry {
  const char* descr;  // as numpy writes it
  DataType dtype;
};

const DescrEntry* DescrTable(size_t* count) {
  static const DescrEntry table[] = {
      {"|b1", DataType::Bool()},      {"|i1", DataType::Int(8)},     {"<i2", DataType::Int(16)},
      {"<i4", DataType::Int(32)},     {"<i8", DataType::Int(64)},    {"|u1", DataType::UInt(8)},
      {"<u2", DataType::UInt(16)},    {"<u4", DataType::UInt(32)},   {"<u8", DataType::UInt(64)},
      {"<f2", DataType::Float(16)},   {"<f4", DataType::Float(32)},  {"<f8", DataType::Float(64)},
  };
  *count = std::size(table);
  return table;
}

std::string SupportedDescrs() {
  size_t count = 0;
  const DescrEntry* table = DescrTable(&count);
  std::string list;
  for (size_t i = 0; i < count; ++i) list += (i ? ", " : "") + std::string(table[i].descr);
  return list;
}

// Parses the header dict. Errors carry only the problem; LoadNpy adds the file name.
class HeaderParser {
 public:
  explicit HeaderParser(const std::string& text) : text_(text) {}

  void Parse(std::string* descr, bool* fortran_order, std::vector<int64_t>* shape) {
    bool seen_descr = false, seen_order = false, seen_shape = false;
    Expect('{');
    while (true) {
      SkipSpace();
      if (Peek() == '}') break;
      std::string key = ParseString();
      Expect(':');
      if (key == "descr") {
        *descr = ParseString();
        seen_descr = true;
      } else if (key == "fortran_order") {
        *fortran_order = ParseBool();
        seen_order = true;
      } else if (key == "shape") {
        *shape = ParseTuple();
        seen_shape = true;
      } else {
        Fail("unexpected key '" + key + "'");
      }
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() != '}') Fail("expected ',' or '}'");
    }
    LOOM_CHECK_USER(seen_descr && seen_order && seen_shape)
        << "malformed header: it must have the keys 'descr', 'fortran_order' and 'shape'";
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    LOOM_THROW << "malformed header: " << what << " at offset " << pos_ << " of \"" << text_
               << "\"";
  }
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  void Expect(char c) {
    SkipSpace();
    if (Peek() != c) Fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string ParseString() {
    SkipSpace();
    char quote = Peek();
    if (quote != '\'' && quote != '"') Fail("expected a quoted string");
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos) Fail("unterminated string");
    std::string value = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return value;
  }
  bool ParseBool() {
    SkipSpace();
    for (const char* word : {"True", "False"}) {
      if (text_.compare(pos_, std::strlen(word), word) == 0) {
        pos_ += std::strlen(word);
        return word[0] == 'T';
      }
    }
    Fail("expected True or False");
  }
  std::vector<int64_t> ParseTuple() {
    std::vector<int64_t> values;
    Expect('(');
    while (true) {
      SkipSpace();
      if (Peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(Peek()))) Fail("expected a dimension");
      int64_t value = 0;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) {
        int digit = Peek() - '0';
        if (value > (INT64_MAX - digit) / 10) Fail("dimension too large");
        value = value * 10 + digit;
        ++pos_;
      }
      if (Peek() == 'L') ++pos_;  // Python 2 long suffix
      values.push_back(value);
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != ')') {
        Fail("expected ',' or ')'");
      }
    }
    ++pos_;
    return values;
  }

  const std::string& text_;
  size_t pos_ = 0;
};

DataType DataTypeOfDescr(std::string descr) {
  // '=' (native) and '<' agree on a little-endian host; single-byte types may use any.
  if (!descr.empty() && descr[0] == '=') descr[0] = '<';
  LOOM_CHECK_USER(descr.empty() || descr[0] != '>' || (descr.size() == 3 && descr[2] == '1'))
      << "dtype '" << descr << "' is big-endian; convert it with arr.astype(arr.dtype.newbyteorder('<'))";
  size_t count = 0;
  const DescrEntry* table = DescrTable(&count);
  for (size_t i = 0; i < count; ++i) {
    const char* entry = table[i].descr;
    if (descr == entry) return table[i].dtype;
    // "<i1" and "|i1" both name a byte type.
    if (descr.size() == 3 && entry[0] == '|' && descr.compare(1, 2, entry + 1) == 0) {
      return table[i].dtype;
    }
  }
  LOOM_THROW << "dtype '" << descr << "' is not supported; supported dtypes: "
             << SupportedDescrs();
}

std::string DescrOfDataType(DataType dtype) {
  size_t count = 0;
  const DescrEntry* table = DescrTable(&count);
  for (size_t i = 0; i < count; ++i) {
    if (table[i].dtype == dtype) return table[i].descr;
  }
  LOOM_THROW << "dtype " << dtype << " has no NumPy equivalent (supported: bool, int8-64, "
             << "uint8-64, float16/32/64); convert the array first";
}

uint32_t ReadLittleEndian(const std::string& bytes, size_t offset, size_t width) {
  uint32_t value = 0;
  for (size_t i = 0; i < width; ++i) {
    value |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  }
  return value;
}

NDArray ParseNpy(const std::string& bytes) {
  LOOM_CHECK_USER(bytes.size() >= kMagicSize && bytes.compare(0, kMagicSize, kMagic) == 0)
      << "not a .npy file: it does not start with the \\x93NUMPY magic";
  LOOM_CHECK_USER(bytes.size() >= kMagicSize + 2)
      << "file is truncated: it ends inside the format version";
  int major = static_cast<unsigned char>(bytes[kMagicSize]);
  int minor = static_cast<unsigned char>(bytes[kMagicSize + 1]);
  LOOM_CHECK_USER(major >= 1 && major <= 3 && minor == 0)
      << "format version " << major << "." << minor
      << " is not supported (1.0, 2.0 and 3.0 are)";
  size_t length_width = major == 1 ? 2 : 4;
  size_t length_offset = kMagicSize + 2;
  LOOM_CHECK_USER(bytes.size() >= length_offset + length_width)
      << "file is truncated: it ends inside the header length";
  size_t header_length = ReadLittleEndian(bytes, length_offset, length_width);
  size_t data_offset = length_offset + length_width + header_length;
  LOOM_CHECK_USER(bytes.size() >= data_offset)
      << "file is truncated: the header needs " << data_offset << " bytes but the file has "
      << bytes.size();

  std::string header = bytes.substr(length_offset + length_width, header_length);
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  HeaderParser(header).Parse(&descr, &fortran_order, &shape);
  DataType dtype = DataTypeOfDescr(descr);

  LOOM_CHECK_USER(!fortran_order || shape.size() <= 1)
      << "the array is stored in Fortran order; only C order is supported: save "
      << "numpy.ascontiguousarray(arr) instead";
  NDArray array = NDArray::Empty(shape, dtype);
  size_t available = bytes.size() - data_offset;
  LOOM_CHECK_USER(available >= array.NumBytes())
      << "file is truncated: shape " << ShapeString(shape) << " of " << descr << " needs "
      << array.NumBytes() << " data bytes but only " << available << " follow the header";
  LOOM_CHECK_USER(available == array.NumBytes())
      << "file is corrupt: " << available - array.NumBytes()
      << " unexpected bytes follow the " << array.NumBytes() << " data bytes";
  array.CopyFromBytes(bytes.data() + data_offset, array.NumBytes());
  return array;
}

std::string NpyHeader(const std::string& descr, const std::vector<int64_t>& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    dict += (i ? ", " : "") + std::to_string(shape[i]);
  }
  dict += shape.size() == 1 ? ",), }" : "), }";
  // Pad with spaces so magic + version + length + dict + '\n' is a multiple of 64.
  // Padding adds at most kHeaderAlignment bytes; version 1 stores the length in 16 bits.
  size_t version = dict.size() + kHeaderAlignment > UINT16_MAX ? 2 : 1;
  size_t prefix = kMagicSize + 2 + (version == 1 ? 2 : 4);
  size_t total = prefix + dict.size() + 1;
  size_t padded = (total + kHeaderAlignment - 1) / kHeaderAlignment * kHeaderAlignment;
  dict.append(padded - total, ' ');
  dict += '\n';

  std::string out(kMagic, kMagicSize);
  out += static_cast<char>(version);
  out += '\0';
  uint32_t length = static_cast<uint32_t>(dict.size());
  for (size_t i = 0; i < prefix - kMagicSize - 2; ++i) {
    out += static_cast<char>((length >> (8 * i)) & 0xFF);
  }
  return out + dict;
}

}  // namespace

NDArray NDArray::LoadNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  LOOM_CHECK_USER(in.good()) << "LoadNpy('" << path << "'): cannot open the file ("
                             << std::strerror(errno) << ")";
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LOOM_CHECK_USER(!in.bad()) << "LoadNpy('" << path << "'): reading the file failed";
  try {
    return ParseNpy(bytes);
  } catch (const Error& error) {
    throw Error("LoadNpy('" + path + "'): " + error.what());
  }
}

void NDArray::SaveNpy(const std::string& path) const {
  LOOM_ICHECK(defined()) << "SaveNpy on an undefined NDArray";
  std::string header;
  try {
    header = NpyHeader(DescrOfDataType(dtype()), Shape());
  } catch (const Error& error) {
    throw Error("SaveNpy('" + path + "'): " + error.what());
  }
  std::string data(NumBytes(), '\0');
  CopyToBytes(data.data(), data.size());
  // A new file renamed over the path: a symbolic link there is replaced, not followed.
  WriteFileReplacing(path, header + data, "SaveNpy");
}

}  // namespace loom::runtime
