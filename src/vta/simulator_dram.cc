// The simulated DRAM: host-memory regions behind page-aligned physical addresses.
#include "loom/support/error.h"
#include "loom/vta/simulator.h"

namespace loom::vta {
namespace {

uint64_t RoundUpToPages(uint64_t bytes) {
  uint64_t pages = bytes == 0 ? 1 : (bytes + Dram::kPageBytes - 1) / Dram::kPageBytes;
  return pages * Dram::kPageBytes;
}

}  // namespace

uint64_t Dram::Alloc(size_t bytes) {
  uint64_t reserved = RoundUpToPages(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t phys_addr = 0;
  auto reuse = free_ranges_.lower_bound(reserved);
  if (reuse != free_ranges_.end()) {
    phys_addr = reuse->second;
    // The unused tail of a larger free range stays free for later allocations.
    if (reuse->first > reserved) {
      free_ranges_.emplace(reuse->first - reserved, phys_addr + reserved);
    }
    free_ranges_.erase(reuse);
  } else {
    phys_addr = next_phys_addr_;
    next_phys_addr_ += reserved;
  }
  Region region{reserved, bytes,
                std::unique_ptr<uint8_t[], PageDelete>(
                    new (std::align_val_t(kPageBytes)) uint8_t[reserved]())};
  host_regions_.emplace(reinterpret_cast<uintptr_t>(region.data.get()), phys_addr);
  regions_.emplace(phys_addr, std::move(region));
  return phys_addr;
}

void Dram::Free(uint64_t phys_addr) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = regions_.find(phys_addr);
  LOOM_CHECK_USER(it != regions_.end())
      << "VTA DRAM free: no allocated region starts at physical address 0x" << std::hex << phys_addr
      << " (double free, or not an address returned by Alloc)";
  free_ranges_.emplace(it->second.reserved_bytes, phys_addr);
  host_regions_.erase(reinterpret_cast<uintptr_t>(it->second.data.get()));
  regions_.erase(it);
}

const Dram::Region* Dram::FindRegion(uint64_t phys_addr, uint64_t* region_start) const {
  auto it = regions_.upper_bound(phys_addr);
  if (it == regions_.begin()) return nullptr;
  --it;
  // The end address counts as inside, so that empty ranges there are valid.
  if (phys_addr - it->first > it->second.bytes) return nullptr;
  *region_start = it->first;
  return &it->second;
}

uint8_t* Dram::Host(uint64_t phys_addr, uint64_t bytes, const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t start = 0;
  const Region* region = FindRegion(phys_addr, &start);
  LOOM_CHECK_USER(region != nullptr)
      << what << ": DRAM physical address 0x" << std::hex << phys_addr << std::dec
      << " is not inside any allocated VTA buffer";
  uint64_t offset = phys_addr - start;
  LOOM_CHECK_USER(bytes <= region->bytes - offset)
      << what << ": DRAM range [0x" << std::hex << phys_addr << ", 0x" << phys_addr + bytes
      << ") runs past the end of the VTA buffer at 0x" << start << std::dec << " (" << region->bytes
      << " bytes)";
  return region->data.get() + offset;
}

uint64_t Dram::RegionOfHost(uintptr_t address) const {
  auto it = host_regions_.upper_bound(address);
  if (it == host_regions_.begin()) return 0;
  --it;
  return address - it->first <= regions_.at(it->second).bytes ? it->second : 0;
}

uint64_t Dram::PhysicalAddress(const void* host) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto address = reinterpret_cast<uintptr_t>(host);
  uint64_t start = RegionOfHost(address);
  LOOM_CHECK_USER(start != 0) << "VTA DRAM: host pointer " << host
                              << " does not point into a VTA buffer";
  auto host_start = reinterpret_cast<uintptr_t>(regions_.at(start).data.get());
  return start + (address - host_start);
}

bool Dram::Contains(const void* host, size_t bytes) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto address = reinterpret_cast<uintptr_t>(host);
  uint64_t start = RegionOfHost(address);
  if (start == 0) return false;
  const Region& region = regions_.at(start);
  return bytes <= region.bytes - (address - reinterpret_cast<uintptr_t>(region.data.get()));
}

size_t Dram::RegionBytes(uint64_t phys_addr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = regions_.find(phys_addr);
  LOOM_CHECK_USER(it != regions_.end())
      << "VTA DRAM: no allocated region starts at physical address 0x" << std::hex << phys_addr;
  return it->second.bytes;
}

}  // namespace loom::vta
