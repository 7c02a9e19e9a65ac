// A model library read as a file, never loaded (loom/runtime/graph_executor.h): its digest
// (SealArtifact, CheckArtifact) and its graph and weights (DescribeModel), located through the
// library's dynamic symbol table.
#include <elf.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "loom/runtime/graph_executor.h"
#include "loom/runtime/vm.h"
#include "loom/support/error.h"
#include "loom/support/file.h"
#include "runtime/artifact.h"

namespace loom::runtime {
namespace {

constexpr const char* kDigestSymbol = "loom_digest";

// A whole model library in memory, every read bounds-checked; errors name `what` (the call
// and the file).
class LibraryBytes {
 public:
  // A model library holds its weights: no cap but the file's own size; a directory or a
  // device is refused.
  LibraryBytes(const std::string& path, std::string what)
      : what_(std::move(what)),
        bytes_(ReadRegularFile(path, std::numeric_limits<size_t>::max(), what_ + ": the model")) {}

  // The `size` bytes at `offset`, checked to lie in the file before anything is allocated
  // for them (a corrupt header can claim exabytes).
  std::string_view Bytes(uint64_t offset, uint64_t size, const std::string& part) const {
    LOOM_CHECK_USER(offset <= bytes_.size() && size <= bytes_.size() - offset)
        << what_ << ": its " << part << " (" << size << " bytes at " << offset
        << ") runs past the end of the file (" << bytes_.size() << " bytes): the file is "
        << "truncated or corrupt";
    return std::string_view(bytes_).substr(offset, size);
  }
  void Read(uint64_t offset, uint64_t size, void* out, const std::string& part) const {
    const std::string_view bytes = Bytes(offset, size, part);
    if (size > 0) std::memcpy(out, bytes.data(), size);
  }
  template <typename T>
  T Read(uint64_t offset, const std::string& part) const {
    T value{};
    Read(offset, sizeof(T), &value, part);
    return value;
  }
  std::string& bytes() { return bytes_; }
  const std::string& what() const { return what_; }

 private:
  std::string what_;
  std::string bytes_;
};

// The file offsets of the bytes behind the library's dynamic symbols, by name (each with the
// bytes left in its section).
struct Located {
  uint64_t offset = 0, room = 0;
};

std::map<std::string, Located> DynamicSymbols(const LibraryBytes& file) {
  const std::string& what = file.what();
  const auto header = file.Read<Elf64_Ehdr>(0, "ELF header");
  LOOM_CHECK_USER(std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0 &&
                  header.e_ident[EI_CLASS] == ELFCLASS64 &&
                  header.e_ident[EI_DATA] == ELFDATA2LSB && header.e_type == ET_DYN)
      << what << ": not a 64-bit little-endian shared library; a compiled model is one (loom "
      << "compile)";
  LOOM_CHECK_USER(header.e_shentsize == sizeof(Elf64_Shdr) && header.e_shnum > 0)
      << what << ": the library has no section table it can read: the file is corrupt";
  const std::string_view section_table = file.Bytes(
      header.e_shoff, uint64_t{header.e_shnum} * sizeof(Elf64_Shdr), "section header table");
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  std::memcpy(sections.data(), section_table.data(), section_table.size());
  const Elf64_Shdr* symtab = nullptr;
  for (const Elf64_Shdr& section : sections) {
    if (section.sh_type == SHT_DYNSYM) symtab = &section;
  }
  LOOM_CHECK_USER(symtab != nullptr && symtab->sh_link < sections.size() &&
                  symtab->sh_entsize == sizeof(Elf64_Sym))
      << what << ": the library has no dynamic symbol table it can read: the file is corrupt";
  const Elf64_Shdr& strtab = sections[symtab->sh_link];
  const std::string names(file.Bytes(strtab.sh_offset, strtab.sh_size, "symbol names"));
  const std::string_view symbol_table =
      file.Bytes(symtab->sh_offset, symtab->sh_size / sizeof(Elf64_Sym) * sizeof(Elf64_Sym),
                 "dynamic symbol table");
  std::vector<Elf64_Sym> symbols(symbol_table.size() / sizeof(Elf64_Sym));
  std::memcpy(symbols.data(), symbol_table.data(), symbol_table.size());

  std::map<std::string, Located> found;
  for (const Elf64_Sym& symbol : symbols) {
    if (symbol.st_name >= names.size() || symbol.st_shndx == SHN_UNDEF ||
        symbol.st_shndx >= sections.size()) {
      continue;
    }
    const std::string name(names.c_str() + symbol.st_name,
                           strnlen(names.c_str() + symbol.st_name, names.size() - symbol.st_name));
    if (name.rfind("loom_", 0) != 0) continue;  // a model's data symbols only
    const Elf64_Shdr& section = sections[symbol.st_shndx];
    if (section.sh_type == SHT_NOBITS || symbol.st_value < section.sh_addr ||
        symbol.st_value - section.sh_addr > section.sh_size) {
      continue;
    }
    const uint64_t into = symbol.st_value - section.sh_addr;
    found[name] = {section.sh_offset + into, section.sh_size - into};
  }
  return found;
}

Located Require(const std::map<std::string, Located>& symbols, const char* name,
                const std::string& what) {
  auto it = symbols.find(name);
  LOOM_CHECK_USER(it != symbols.end())
      << what << ": the library has no symbol '" << name << "': it is no model written by "
      << "ExportModel (loom compile)";
  return it->second;
}

// The digest of the whole file with the digest's own 8 bytes taken as zero.
uint64_t DigestWithoutItself(LibraryBytes& file, uint64_t digest_offset) {
  uint64_t recorded = 0;
  file.Read(digest_offset, sizeof(recorded), &recorded, "digest");
  std::memset(file.bytes().data() + digest_offset, 0, sizeof(recorded));
  const uint64_t digest = ContentDigest(file.bytes().data(), file.bytes().size());
  std::memcpy(file.bytes().data() + digest_offset, &recorded, sizeof(recorded));
  return digest;
}

// Checks the file's digest; returns its symbols.
std::map<std::string, Located> CheckDigest(LibraryBytes& file) {
  const std::map<std::string, Located> symbols = DynamicSymbols(file);
  LOOM_CHECK_USER(symbols.count("loom_graph_json") != 0)
      << file.what() << ": the library has no symbol 'loom_graph_json': it holds kernels but "
      << "no model; load a model library written by ExportModel (loom compile), or load "
      << "kernels alone with LoadModuleFromFile";
  const uint64_t at = Require(symbols, kDigestSymbol, file.what()).offset;
  const auto recorded = file.Read<uint64_t>(at, "digest");
  const uint64_t digest = DigestWithoutItself(file, at);
  LOOM_CHECK_USER(digest == recorded)
      << file.what() << ": the file differs from what was exported (digest " << std::hex << digest
      << ", recorded " << recorded << "): it is corrupt; compile the model again";
  return symbols;
}

}  // namespace

uint64_t ContentDigest(const void* data, size_t size) {
  // Four independent lanes of multiply-rotate over 8-byte words (so the multiplies overlap),
  // folded together with the length; the tail bytes one at a time.
  constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ULL, kPrime2 = 0xC2B2AE3D27D4EB4FULL;
  auto mix = [](uint64_t h, uint64_t word) {
    h += word * kPrime2;
    h = (h << 31) | (h >> 33);
    return h * kPrime1;
  };
  const auto* bytes = static_cast<const uint8_t*>(data);
  uint64_t lanes[4] = {kPrime1, kPrime2, 0, 0 - kPrime1};
  size_t at = 0;
  for (; at + 32 <= size; at += 32) {
    for (int lane = 0; lane < 4; ++lane) {
      uint64_t word;
      std::memcpy(&word, bytes + at + 8 * lane, 8);
      lanes[lane] = mix(lanes[lane], word);
    }
  }
  uint64_t h = size;
  for (uint64_t lane : lanes) h = mix(h, lane);
  for (; at < size; ++at) h = mix(h, bytes[at]);
  h ^= h >> 29;
  h *= kPrime2;
  return h ^ (h >> 32);
}

void SealArtifact(const std::string& path) {
  LibraryBytes file(path, "SealArtifact('" + path + "')");
  const uint64_t at = Require(DynamicSymbols(file), kDigestSymbol, file.what()).offset;
  const uint64_t digest = DigestWithoutItself(file, at);
  std::fstream out(path, std::ios::binary | std::ios::in | std::ios::out);
  out.seekp(static_cast<std::streamoff>(at));
  out.write(reinterpret_cast<const char*>(&digest), sizeof(digest));
  LOOM_CHECK_USER(out.good()) << file.what() << ": writing the digest failed";
}

void CheckArtifact(const std::string& path) {
  LibraryBytes file(path, "LoadModel('" + path + "')");
  CheckDigest(file);
}

detail::ArtifactData detail::ReadArtifactData(const std::string& path, const std::string& api,
                                              bool with_params) {
  LibraryBytes file(path, api + "('" + path + "')");
  const std::map<std::string, Located> symbols = CheckDigest(file);
  const std::string& what = file.what();
  const uint64_t json_size =
      file.Read<uint64_t>(Require(symbols, "loom_graph_json_size", what).offset, "graph size");
  const Located json_at = Require(symbols, "loom_graph_json", what);
  LOOM_CHECK_USER(json_size <= json_at.room)
      << what << ": its graph (" << json_size << " bytes) does not fit its section";
  ArtifactData data;
  data.program = std::string(file.Bytes(json_at.offset, json_size, "execution graph"));
  if (!with_params) return data;
  const uint64_t params_size =
      file.Read<uint64_t>(Require(symbols, "loom_params_size", what).offset, "weights size");
  const Located params_at = Require(symbols, "loom_params", what);
  LOOM_CHECK_USER(params_size <= params_at.room)
      << what << ": its weights (" << params_size << " bytes) do not fit their section";
  const std::string_view weights = file.Bytes(params_at.offset, params_size, "weights");
  constexpr std::align_val_t kAlignment{64};  // as kernels require of every tensor
  std::shared_ptr<uint8_t> params(new (kAlignment) uint8_t[std::max<uint64_t>(params_size, 1)],
                                  [](uint8_t* p) { operator delete[](p, kAlignment); });
  std::memcpy(params.get(), weights.data(), weights.size());
  data.params = params.get();
  data.params_size = params_size;
  data.params_owner = params;
  return data;
}

bool IsVmArtifact(const std::string& path) {
  return IsVmProgram(detail::ReadArtifactData(path, "IsVmArtifact", false).program);
}

std::shared_ptr<const GraphModel> DescribeModel(const std::string& path) {
  detail::ArtifactData data = detail::ReadArtifactData(path, "DescribeModel");
  LOOM_CHECK_USER(!IsVmProgram(data.program))
      << "DescribeModel('" << path << "'): the model runs on the virtual machine; describe it "
      << "with DescribeVmModel";
  try {
    return detail::ParseGraphModel(Module(), data.program, data.params, data.params_size,
                                   data.params_owner);
  } catch (const Error& error) {
    LOOM_THROW << "DescribeModel('" << path << "'): " << error.what();
  }
}

}  // namespace loom::runtime
