// The VTA simulator's fetch/dispatch, the dependency-token queues between the load, compute
// and store modules, the per-module clocks of the timing model, and the reports.
#include <algorithm>
#include <array>
#include <deque>
#include <iomanip>
#include <memory>
#include <cstdio>
#include <sstream>
#include <utility>
#include <vector>

#include "loom/support/error.h"
#include "vta/simulator_internal.h"

namespace loom::vta {
namespace {

enum TokenQueue { kL2G = 0, kG2L = 1, kG2S = 2, kS2G = 3, kNumQueues = 4 };

const char* QueueName(int queue) {
  static const char* const kNames[] = {"load->compute (l2g)", "compute->load (g2l)",
                                       "compute->store (g2s)", "store->compute (s2g)"};
  return kNames[queue];
}

// Which module executes an instruction and which token queues it pops and pushes.
struct Dispatch {
  Module module = kComputeModule;
  std::vector<int> pops;
  std::vector<int> pushes;
};

Module ModuleOf(uint64_t index, const Insn& insn) {
  const auto* mem = std::get_if<MemInsn>(&insn);
  if (mem == nullptr) return kComputeModule;
  if (mem->opcode == Opcode::kStore) return kStoreModule;
  LOOM_CHECK_USER(mem->opcode == Opcode::kLoad)
      << InsnLabel(index, insn) << ": unknown opcode " << static_cast<int>(mem->opcode)
      << " for a memory instruction (expected LOAD or STORE)";
  bool to_load_module = mem->memory_type == MemId::kInp || mem->memory_type == MemId::kWgt;
  return to_load_module ? kLoadModule : kComputeModule;
}

Dispatch DispatchOf(uint64_t index, const Insn& insn) {
  Dispatch dispatch;
  dispatch.module = ModuleOf(index, insn);
  const DepFlags& deps = GetDeps(insn);
  // prev/next neighbour queues of each module; -1 where the neighbour does not exist.
  static constexpr std::array<std::array<int, 4>, kNumModules> kQueues = {{
      // pop_prev, pop_next, push_prev, push_next
      {-1, kG2L, -1, kL2G},      // load
      {kL2G, kS2G, kG2L, kG2S},  // compute
      {kG2S, -1, kS2G, -1},      // store
  }};
  const auto& queues = kQueues[dispatch.module];
  const std::array<bool, 4> flags = {deps.pop_prev, deps.pop_next, deps.push_prev, deps.push_next};
  static const char* const kFlagNames[] = {"pop_prev", "pop_next", "push_prev", "push_next"};
  for (int f = 0; f < 4; ++f) {
    if (!flags[f]) continue;
    LOOM_CHECK_USER(queues[f] >= 0)
        << InsnLabel(index, insn) << ": " << kFlagNames[f] << " is set, but the "
        << ModuleName(dispatch.module) << " module has no " << (f % 2 == 0 ? "previous" : "next")
        << " neighbour to exchange tokens with";
    (f < 2 ? dispatch.pops : dispatch.pushes).push_back(queues[f]);
  }
  return dispatch;
}

}  // namespace

const char* ModuleName(int module) {
  static const char* const kNames[] = {"load", "compute", "store"};
  return kNames[module];
}

std::string InsnLabel(uint64_t index, const Insn& insn) {
  std::ostringstream label;
  label << "VTA instruction #" << index << " (";
  if (const auto* mem = std::get_if<MemInsn>(&insn)) {
    label << OpcodeName(mem->opcode) << " " << MemIdName(mem->memory_type);
  } else if (const auto* alu = std::get_if<AluInsn>(&insn)) {
    label << "ALU " << AluOpcodeName(alu->alu_opcode);
  } else {
    label << OpcodeName(GetOpcode(insn));
  }
  label << ")";
  return label.str();
}

ProgramRunner::ProgramRunner(Simulator* sim, SimCounters* counters, HazardChecker* hazards)
    : sim_(sim),
      config_(sim->config_),
      buffers_(*sim->buffers_),
      counters_(counters),
      hazards_(hazards) {}

int ProgramRunner::HazardBufferOf(MemId memory_type) {
  switch (memory_type) {
    case MemId::kInp:
      return HazardChecker::kInp;
    case MemId::kWgt:
      return HazardChecker::kWgt;
    case MemId::kAcc:
    case MemId::kAcc8:
    case MemId::kOut:
      return HazardChecker::kAcc;
    case MemId::kUop:
      break;
  }
  return -1;
}

InsnCost ProgramRunner::Execute(uint64_t index, const Insn& insn) {
  if (const auto* mem = std::get_if<MemInsn>(&insn)) {
    return mem->opcode == Opcode::kLoad ? ExecLoad(index, *mem) : ExecStore(index, *mem);
  }
  if (const auto* gemm = std::get_if<GemmInsn>(&insn)) return ExecGemm(index, *gemm);
  if (const auto* alu = std::get_if<AluInsn>(&insn)) return ExecAlu(index, *alu);
  return {kNoopCycles, 0};  // FINISH
}

Simulator::Simulator(const VTAConfig& config, Dram* dram)
    : config_(config), dram_(dram), buffers_(std::make_unique<Buffers>()) {
  config_.Validate();
  LOOM_ICHECK(dram_ != nullptr) << "the VTA simulator needs a DRAM";
  buffers_->uop.assign(config_.uop_buff_depth(), 0);
  buffers_->inp.assign(config_.inp_buff_depth() * config_.batch() * config_.block_in(), 0);
  buffers_->wgt.assign(config_.wgt_buff_depth() * config_.block_out() * config_.block_in(), 0);
  buffers_->acc.assign(config_.acc_buff_depth() * config_.batch() * config_.block_out(), 0);
}

Simulator::~Simulator() = default;

SimReport Simulator::Run(std::span<const InsnWord> program) {
  std::vector<Insn> decoded;
  decoded.reserve(program.size());
  for (size_t i = 0; i < program.size(); ++i) {
    try {
      decoded.push_back(Decode(config_, program[i]));
    } catch (const Error& error) {
      LOOM_THROW << "VTA instruction #" << i << ": " << error.what();
    }
  }
  return Run(std::span<const Insn>(decoded));
}

SimReport Simulator::Run(std::span<const Insn> program) {
  // Fetch: check every instruction's routing and flags before anything executes.
  std::vector<Dispatch> dispatch;
  dispatch.reserve(program.size());
  std::array<std::vector<uint64_t>, kNumModules> module_queue;
  for (uint64_t i = 0; i < program.size(); ++i) {
    if (i > 0) {
      LOOM_CHECK_USER(GetOpcode(program[i - 1]) != Opcode::kFinish)
          << InsnLabel(i, program[i]) << " follows FINISH (instruction #" << i - 1
          << "); FINISH must end the program";
    }
    dispatch.push_back(DispatchOf(i, program[i]));
    module_queue[dispatch.back().module].push_back(i);
  }

  SimReport report;
  std::unique_ptr<HazardChecker> hazards;
  if (options_.check_hazards) hazards = std::make_unique<HazardChecker>(config_, program);
  ProgramRunner runner(this, &report.counters, hazards.get());
  std::array<std::deque<uint64_t>, kNumQueues> tokens;        // push times, FIFO
  std::array<std::deque<uint64_t>, kNumQueues> token_pusher;  // instruction that pushed each
  // What each token's pusher knew (hazard checking only).
  std::array<std::deque<HazardChecker::Clock>, kNumQueues> token_clocks;
  std::array<size_t, kNumModules> next = {0, 0, 0};
  std::array<uint64_t, kNumModules> clock = {0, 0, 0};
  std::array<uint64_t, kNumModules> busy = {0, 0, 0};
  uint64_t last_finish = 0;  // of the instruction executed last (SimOptions::serialize)

  // Each step runs the module whose next instruction can start earliest, so functional
  // effects happen in the order of simulated time (ties: load, compute, store).
  while (true) {
    int chosen = -1;
    uint64_t chosen_start = 0;
    bool any_left = false;
    for (int m = 0; m < kNumModules; ++m) {
      if (next[m] == module_queue[m].size()) continue;
      any_left = true;
      uint64_t index = module_queue[m][next[m]];
      uint64_t start = std::max(clock[m], (index + 1) * kFetchCyclesPerInsn);
      if (options_.serialize) start = std::max(start, last_finish);
      bool ready = true;
      for (int queue : dispatch[index].pops) {
        if (tokens[queue].empty()) {
          ready = false;
          break;
        }
        start = std::max(start, tokens[queue].front());
      }
      if (ready && (chosen < 0 || start < chosen_start)) {
        chosen = m;
        chosen_start = start;
      }
    }
    if (!any_left) break;
    if (chosen < 0) {
      // Every unfinished module waits on an empty queue that only a waiting module could fill.
      std::ostringstream why;
      for (int m = 0; m < kNumModules; ++m) {
        if (next[m] == module_queue[m].size()) continue;
        uint64_t index = module_queue[m][next[m]];
        for (int queue : dispatch[index].pops) {
          if (!tokens[queue].empty()) continue;
          if (why.tellp() > 0) why << "; ";
          why << InsnLabel(index, program[index]) << " in the " << ModuleName(m)
              << " module waits on the empty " << QueueName(queue) << " token queue";
          break;
        }
      }
      LOOM_THROW << "VTA program deadlocks: " << why.str()
                 << "; no module can run to push the tokens they wait for";
    }

    uint64_t index = module_queue[chosen][next[chosen]++];
    std::vector<HazardChecker::Clock> popped;
    for (int queue : dispatch[index].pops) {
      tokens[queue].pop_front();
      token_pusher[queue].pop_front();
      if (hazards) {
        popped.push_back(token_clocks[queue].front());
        token_clocks[queue].pop_front();
      }
    }
    if (hazards) hazards->Begin(index, chosen, popped);
    InsnCost cost = runner.Execute(index, program[index]);
    uint64_t finish = chosen_start + cost.cycles;
    clock[chosen] = finish;
    last_finish = finish;
    busy[chosen] += cost.cycles;
    report.timing.gemm_busy_cycles += cost.gemm_cycles;
    for (int queue : dispatch[index].pushes) {
      tokens[queue].push_back(finish);
      token_pusher[queue].push_back(index);
      if (hazards) token_clocks[queue].push_back(hazards->clock());
    }
  }

  for (int queue = 0; queue < kNumQueues; ++queue) {
    if (tokens[queue].empty()) continue;
    const std::string first_pusher =
        InsnLabel(token_pusher[queue].front(), program[token_pusher[queue].front()]);
    LOOM_CHECK_USER(!options_.tokens_must_drain)
        << "VTA program ends with " << tokens[queue].size() << " unconsumed token(s) in the "
        << QueueName(queue) << " queue, the first pushed by " << first_pusher
        << "; every pushed token must be popped";
    report.leftover_tokens.push_back(std::to_string(tokens[queue].size()) + " token(s) in the " +
                                     QueueName(queue) + " queue, the first pushed by " +
                                     first_pusher);
  }
  report.timing.load_busy_cycles = busy[kLoadModule];
  report.timing.compute_busy_cycles = busy[kComputeModule];
  report.timing.store_busy_cycles = busy[kStoreModule];
  report.timing.total_cycles =
      std::max({clock[kLoadModule], clock[kComputeModule], clock[kStoreModule]});
  total_counters_ += report.counters;
  return report;
}

namespace {

int32_t BufferValue(const std::vector<int32_t>& values, uint64_t index, int lane, int lanes,
                    const char* buffer) {
  LOOM_CHECK_USER(lane >= 0 && lane < lanes && index < values.size() / lanes)
      << "VTA " << buffer << " buffer: element " << index << " lane " << lane
      << " is out of range (depth " << values.size() / lanes << ", " << lanes << " lanes)";
  return values[index * lanes + lane];
}

}  // namespace

int32_t Simulator::InpValue(uint64_t index, int lane) const {
  return BufferValue(buffers_->inp, index, lane, config_.batch() * config_.block_in(), "input");
}

int32_t Simulator::WgtValue(uint64_t index, int lane) const {
  return BufferValue(buffers_->wgt, index, lane, config_.block_out() * config_.block_in(),
                     "weight");
}

int32_t Simulator::AccValue(uint64_t index, int lane) const {
  return BufferValue(buffers_->acc, index, lane, config_.batch() * config_.block_out(),
                     "accumulator");
}

uint32_t Simulator::UopWord(uint64_t index) const {
  LOOM_CHECK_USER(index < buffers_->uop.size())
      << "VTA micro-op buffer: element " << index << " is out of range (depth "
      << buffers_->uop.size() << ")";
  return buffers_->uop[index];
}

SimCounters& SimCounters::operator+=(const SimCounters& other) {
  inp_load_nbytes += other.inp_load_nbytes;
  wgt_load_nbytes += other.wgt_load_nbytes;
  acc_load_nbytes += other.acc_load_nbytes;
  uop_load_nbytes += other.uop_load_nbytes;
  out_store_nbytes += other.out_store_nbytes;
  gemm_counter += other.gemm_counter;
  alu_counter += other.alu_counter;
  return *this;
}

std::string CounterLines(const SimCounters& c, const SimTiming& timing) {
  std::ostringstream lines;
  for (auto [counter, value] :
       std::vector<std::pair<const char*, uint64_t>>{{"inp_load_nbytes", c.inp_load_nbytes},
                                                     {"wgt_load_nbytes", c.wgt_load_nbytes},
                                                     {"acc_load_nbytes", c.acc_load_nbytes},
                                                     {"uop_load_nbytes", c.uop_load_nbytes},
                                                     {"out_store_nbytes", c.out_store_nbytes},
                                                     {"gemm_counter", c.gemm_counter},
                                                     {"alu_counter", c.alu_counter}}) {
    lines << "counter " << counter << "=" << value << "\n";
  }
  char cycles[128];
  std::snprintf(cycles, sizeof(cycles), "cycles total=%llu gemm_utilization=%.3f\n",
                static_cast<unsigned long long>(timing.total_cycles), timing.gemm_utilization());
  lines << cycles;
  return lines.str();
}

SimTiming& SimTiming::operator+=(const SimTiming& other) {
  total_cycles += other.total_cycles;
  load_busy_cycles += other.load_busy_cycles;
  compute_busy_cycles += other.compute_busy_cycles;
  store_busy_cycles += other.store_busy_cycles;
  gemm_busy_cycles += other.gemm_busy_cycles;
  return *this;
}

double SimTiming::gemm_utilization() const {
  if (total_cycles == 0) return 0.0;
  return static_cast<double>(gemm_busy_cycles) / static_cast<double>(total_cycles);
}

std::string SimReport::ToJson() const {
  std::ostringstream json;
  json << "{\"inp_load_nbytes\": " << counters.inp_load_nbytes
       << ", \"wgt_load_nbytes\": " << counters.wgt_load_nbytes
       << ", \"acc_load_nbytes\": " << counters.acc_load_nbytes
       << ", \"uop_load_nbytes\": " << counters.uop_load_nbytes
       << ", \"out_store_nbytes\": " << counters.out_store_nbytes
       << ", \"gemm_counter\": " << counters.gemm_counter
       << ", \"alu_counter\": " << counters.alu_counter
       << ", \"total_cycles\": " << timing.total_cycles
       << ", \"load_busy_cycles\": " << timing.load_busy_cycles
       << ", \"compute_busy_cycles\": " << timing.compute_busy_cycles
       << ", \"store_busy_cycles\": " << timing.store_busy_cycles
       << ", \"gemm_busy_cycles\": " << timing.gemm_busy_cycles
       << ", \"gemm_utilization\": " << std::setprecision(6) << timing.gemm_utilization() << "}";
  return json.str();
}

std::string SimReport::ToString() const {
  std::ostringstream text;
  auto row = [&text](const char* name, uint64_t value) {
    text << "  " << std::left << std::setw(20) << name << std::right << std::setw(14) << value
         << "\n";
  };
  text << "counters:\n";
  row("inp_load_nbytes", counters.inp_load_nbytes);
  row("wgt_load_nbytes", counters.wgt_load_nbytes);
  row("acc_load_nbytes", counters.acc_load_nbytes);
  row("uop_load_nbytes", counters.uop_load_nbytes);
  row("out_store_nbytes", counters.out_store_nbytes);
  row("gemm_counter", counters.gemm_counter);
  row("alu_counter", counters.alu_counter);
  text << "cycles:\n";
  row("total", timing.total_cycles);
  row("load busy", timing.load_busy_cycles);
  row("compute busy", timing.compute_busy_cycles);
  row("store busy", timing.store_busy_cycles);
  row("gemm busy", timing.gemm_busy_cycles);
  text << "  " << std::left << std::setw(20) << "gemm utilization" << std::right << std::setw(13)
       << std::fixed << std::setprecision(1) << 100.0 * timing.gemm_utilization() << "%\n";
  return text.str();
}

}  // namespace loom::vta
