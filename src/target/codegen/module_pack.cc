// Imported modules inside an exported library (loom/target/codegen.h, SerializeImports): the
// LOOM_IMPORTS_SYMBOL blob that runtime::LoadModuleFromFile reads back. Its layout, all
// integers uint64 little-endian: the number of modules, then per module the length and bytes
// of its loader's type key, then the length and bytes of its data.
#include <fstream>
#include <sstream>

#include "loom/target/codegen.h"
#include "target/codegen/library_link.h"

namespace loom::codegen {

namespace {

void AppendU64(std::string& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

void AppendBytes(std::string& out, const std::string& bytes) {
  AppendU64(out, bytes.size());
  out += bytes;
}

// A module with no serializer of its own: its shared library's bytes ("dso").
std::pair<std::string, std::string> AsSharedLibrary(const runtime::Module& module) {
  TempDir temp;
  std::string path = temp.File("import.so");
  ExportLibrary(module, path);
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  LOOM_CHECK_USER(in.good() && bytes.good())
      << "ExportLibrary: could not read back the library of an imported '"
      << module->type_key() << "' module from '" << path << "'";
  return {"dso", bytes.str()};
}

}  // namespace

std::string SerializeImports(const runtime::Module& module, const std::string& path) {
  const std::vector<runtime::Module>& imports = module->imports();
  if (imports.empty()) return {};
  std::string blob;
  AppendU64(blob, imports.size());
  for (const runtime::Module& imported : imports) {
    const CodegenEntry& entry = CodegenForModule(imported, path);
    auto [type_key, bytes] = entry.serialize ? entry.serialize(imported) : AsSharedLibrary(imported);
    AppendBytes(blob, type_key);
    AppendBytes(blob, bytes);
  }
  return blob;
}

}  // namespace loom::codegen
