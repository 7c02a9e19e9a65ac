// Loading an exported model library with dlopen. The file is checked as an ELF shared object
// before dlopen sees it: the dynamic loader maps segments without checking that the file
// really holds them, so a truncated library can load and then crash with SIGBUS on first
// use. Checking the headers turns that into an error naming the file.
#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <fstream>
#include <sstream>

#include "loom/runtime/module.h"
#include "loom/support/error.h"

namespace loom::runtime {

namespace {

#if defined(__x86_64__)
constexpr int kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kHostMachine = EM_AARCH64;
#else
#error "LoadModuleFromFile: add this host's ELF machine code"
#endif

const char* kExportHint = "pass a shared library exported by the Loom compiler";

// An ELF machine code as the architecture's name (LLVM's, as target triples spell them).
std::string MachineName(int machine) {
  switch (machine) {
    case EM_X86_64: return "x86_64";
    case EM_AARCH64: return "aarch64";
    case EM_ARM: return "arm";
    case EM_386: return "i386";
    case EM_RISCV: return "riscv";
    case EM_PPC64: return "powerpc64";
    default: return "ELF machine " + std::to_string(machine);
  }
}

std::string MachineName(const Elf64_Ehdr& header) {
  std::string name = MachineName(header.e_machine);
  if (header.e_ident[EI_CLASS] != ELFCLASS64) name += " (32-bit)";
  if (header.e_ident[EI_DATA] != ELFDATA2LSB) name += " (big-endian)";
  return name;
}

void CheckFitsInFile(const std::string& path, const char* what, uint64_t offset, uint64_t size,
                     uint64_t file_size) {
  LOOM_CHECK_USER(offset <= file_size && size <= file_size - offset)
      << "LoadModuleFromFile('" << path << "'): the library is truncated or corrupt: its "
      << what << " spans bytes " << offset << " to " << offset + size << " but the file has "
      << file_size << " bytes; re-export or re-copy the library";
}

}  // namespace

std::string HostArchitecture() { return MachineName(kHostMachine); }

std::string LibraryArchitecture(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  LOOM_CHECK_USER(in.good()) << "'" << path << "': the file cannot be read; check the path";
  Elf64_Ehdr header{};
  in.read(reinterpret_cast<char*>(&header), sizeof(header));
  LOOM_CHECK_USER(in.gcount() == sizeof(header) &&
                  std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0)
      << "'" << path << "': not a shared library (the file has no ELF header); " << kExportHint;
  return MachineName(header);
}

void CheckLibraryFile(const std::string& path) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  LOOM_CHECK_USER(std::filesystem::exists(status))
      << "LoadModuleFromFile('" << path << "'): no such file; check the path (relative paths "
      << "are resolved from the current directory, " << std::filesystem::current_path(ec) << ")";
  LOOM_CHECK_USER(std::filesystem::is_regular_file(status))
      << "LoadModuleFromFile('" << path << "'): not a regular file; " << kExportHint;
  uint64_t file_size = std::filesystem::file_size(path, ec);
  std::ifstream in(path, std::ios::binary);
  LOOM_CHECK_USER(in.good() && !ec)
      << "LoadModuleFromFile('" << path << "'): the file cannot be read; check its permissions";

  Elf64_Ehdr header{};
  in.read(reinterpret_cast<char*>(&header), sizeof(header));
  bool has_magic = in.gcount() >= SELFMAG && std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0;
  LOOM_CHECK_USER(has_magic) << "LoadModuleFromFile('" << path
                             << "'): not a shared library (the file has no ELF header); "
                             << kExportHint;
  CheckFitsInFile(path, "ELF header", 0, sizeof(header), file_size);
  LOOM_CHECK_USER(header.e_ident[EI_CLASS] == ELFCLASS64 &&
                  header.e_ident[EI_DATA] == ELFDATA2LSB && header.e_machine == kHostMachine)
      << "LoadModuleFromFile('" << path << "'): the library was built for "
      << MachineName(header) << ", and this runtime runs on " << MachineName(kHostMachine)
      << "; compile the model for this machine (--target llvm) or run it on a "
      << MachineName(header) << " machine";
  LOOM_CHECK_USER(header.e_type == ET_DYN)
      << "LoadModuleFromFile('" << path << "'): an ELF file but not a shared library (ELF type "
      << header.e_type << "); " << kExportHint;
  LOOM_CHECK_USER(header.e_phentsize == sizeof(Elf64_Phdr))
      << "LoadModuleFromFile('" << path << "'): the library is corrupt (program header entry "
      << "size " << header.e_phentsize << "); re-export or re-copy the library";

  CheckFitsInFile(path, "program header table", header.e_phoff,
                  uint64_t{header.e_phnum} * sizeof(Elf64_Phdr), file_size);
  if (header.e_shoff != 0) {
    CheckFitsInFile(path, "section header table", header.e_shoff,
                    uint64_t{header.e_shnum} * header.e_shentsize, file_size);
  }
  in.seekg(static_cast<std::streamoff>(header.e_phoff));
  for (int i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment{};
    in.read(reinterpret_cast<char*>(&segment), sizeof(segment));
    if (segment.p_type != PT_LOAD && segment.p_type != PT_DYNAMIC) continue;
    std::string what = "segment " + std::to_string(i);
    CheckFitsInFile(path, what.c_str(), segment.p_offset, segment.p_filesz, file_size);
  }
}

namespace {

class DSOModuleNode final : public ModuleNode,
                            public std::enable_shared_from_this<DSOModuleNode> {
 public:
  DSOModuleNode(std::string path, void* handle) : path_(std::move(path)), handle_(handle) {
    LOOM_ICHECK(dlinfo(handle_, RTLD_DI_LINKMAP, &link_map_) == 0)
        << "dlinfo of a library dlopen just returned failed: " << dlerror();
  }
  ~DSOModuleNode() override { dlclose(handle_); }

  std::string type_key() const override { return "dso"; }
  std::string description() const override { return "library '" + path_ + "'"; }

  PackedFunc GetFunction(const std::string& name) override {
    void* symbol = FindOwnSymbol(name.c_str());
    if (symbol == nullptr) return PackedFunc();
    // Called, a symbol that names data (the weights' blob, a .bss array) would jump into it.
    LOOM_CHECK_USER(IsFunction(symbol))
        << "library '" << path_ << "': '" << name << "' is not a function but data; the "
        << "artifact is corrupt or not a Loom model";
    return WrapPackedCFunc(reinterpret_cast<LoomBackendPackedCFunc>(symbol), shared_from_this());
  }

  // Whether the library's symbol at `symbol` is code (its ELF symbol type).
  static bool IsFunction(void* symbol) {
    Dl_info info{};
    ElfW(Sym)* entry = nullptr;
    if (dladdr1(symbol, &info, reinterpret_cast<void**>(&entry), RTLD_DL_SYMENT) == 0 ||
        entry == nullptr) {
      return false;
    }
    const int type = ELF64_ST_TYPE(entry->st_info);
    return type == STT_FUNC || type == STT_GNU_IFUNC;
  }

  // dlsym also searches the library's dependencies (libc, ...); only symbols the library
  // itself defines are its functions or globals.
  void* FindOwnSymbol(const char* name) const {
    void* symbol = dlsym(handle_, name);
    if (symbol == nullptr) return nullptr;
    Dl_info info{};
    struct link_map* owner = nullptr;
    if (dladdr1(symbol, &info, reinterpret_cast<void**>(&owner), RTLD_DL_LINKMAP) == 0) {
      return nullptr;
    }
    return owner == link_map_ ? symbol : nullptr;
  }

 private:
  std::string path_;
  void* handle_;
  struct link_map* link_map_ = nullptr;
};

// The modules the library's LOOM_IMPORTS_SYMBOL blob holds (codegen's SerializeImports), each
// loaded by its type's loader and imported into `node`.
void LoadImports(DSOModuleNode& node, const std::string& path) {
  const auto* blob = static_cast<const uint8_t*>(node.FindOwnSymbol(LOOM_IMPORTS_SYMBOL));
  if (blob == nullptr) return;
  const auto* size_global =
      static_cast<const uint64_t*>(node.FindOwnSymbol(LOOM_IMPORTS_SYMBOL "_size"));
  std::string what = "library '" + path + "'";
  LOOM_CHECK_USER(size_global != nullptr)
      << what << " has the imports blob but not its size; " << kExportHint;
  uint64_t size = *size_global, at = 0;
  auto read_u64 = [&]() {
    LOOM_CHECK_USER(size - at >= 8 && at <= size)
        << what << ": its imports blob ends inside a length; " << kExportHint;
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(blob[at + i]) << (8 * i);
    at += 8;
    return value;
  };
  auto read_bytes = [&]() {
    uint64_t length = read_u64();
    LOOM_CHECK_USER(length <= size - at)
        << what << ": its imports blob is truncated (" << length << " bytes announced, "
        << size - at << " left); " << kExportHint;
    std::string bytes(reinterpret_cast<const char*>(blob + at), length);
    at += length;
    return bytes;
  };
  uint64_t count = read_u64();
  for (uint64_t i = 0; i < count; ++i) {
    std::string type_key = read_bytes();
    std::string bytes = read_bytes();
    node.Import(LoadModuleFromBytes(type_key, bytes,
                                    what + " (import " + std::to_string(i) + ")"));
  }
}

}  // namespace

Module LoadModuleFromFile(const std::string& path) {
  CheckLibraryFile(path);
  // Without a slash dlopen would search the system library path instead of this file.
  std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  LOOM_CHECK_USER(handle != nullptr)
      << "LoadModuleFromFile('" << path << "'): the dynamic loader rejected the library: "
      << dlerror() << "; " << kExportHint;
  // dlopen hands out one handle per library, and the library's globals (the module context
  // among them) are shared by every load of it: a library still loaded is the module it
  // already is.
  // Recursive: loading a library's imports loads libraries.
  static std::recursive_mutex mutex;
  static std::map<void*, std::weak_ptr<DSOModuleNode>> loaded;
  std::lock_guard<std::recursive_mutex> lock(mutex);
  if (std::shared_ptr<DSOModuleNode> live = loaded[handle].lock()) {
    dlclose(handle);  // the live node holds its own reference
    return Module(live);
  }
  auto node = std::make_shared<DSOModuleNode>(path, handle);
  InitBackendServices([&](const char* symbol) { return node->FindOwnSymbol(symbol); },
                      node.get());
  LoadImports(*node, path);
  loaded[handle] = node;
  return Module(node);
}

}  // namespace loom::runtime
