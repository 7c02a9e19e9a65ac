#include "remote_measure.h"

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "kernel_check.h"
#include "loom/rpc/client.h"
#include "loom/rpc/tracker.h"
#include "loom/support/error.h"

namespace loom::autotune {

namespace {

// A session on a device, with the libraries it has loaded (a candidate measured in several
// rounds is uploaded once).
struct DeviceSession {
  std::shared_ptr<rpc::Session> session;
  std::map<std::string, rpc::RemoteModule> modules;  // by local library path
};

// A candidate's buffers and functions in a session on the device.
class RemoteKernelHost : public KernelHost {
 public:
  explicit RemoteKernelHost(DeviceSession& device) : device_(device), session_(*device.session) {}

  void Load(const std::string& library) override {
    auto it = device_.modules.find(library);
    if (it == device_.modules.end()) {
      const std::string name = std::filesystem::path(library).filename().string();
      session_.Upload(library, name);
      it = device_.modules.emplace(library, session_.LoadModule(name)).first;
    }
    module_ = it->second;
  }
  void Add(const runtime::NDArray& initial) override {
    buffers_.push_back(session_.CopyOf(initial));
  }
  void Call(const std::string& function, const std::vector<size_t>& buffers) override {
    Function(function).Call(Arguments(buffers));
  }
  runtime::NDArray Read(size_t buffer) override { return buffers_.at(buffer).ToHost(); }
  std::vector<double> Time(const std::string& function, const std::vector<size_t>& buffers,
                           const runtime::TimeOptions& options) override {
    return Function(function).Time(Arguments(buffers), rpc::TimeRequest::From(options));
  }

 private:
  const rpc::RemoteFunction& Function(const std::string& name) {
    auto it = functions_.find(name);
    if (it == functions_.end()) it = functions_.emplace(name, module_.GetFunction(name)).first;
    return it->second;
  }
  std::vector<rpc::RemoteArray> Arguments(const std::vector<size_t>& buffers) const {
    std::vector<rpc::RemoteArray> args;
    for (size_t b : buffers) args.push_back(buffers_.at(b));
    return args;
  }

  DeviceSession& device_;
  rpc::Session& session_;
  rpc::RemoteModule module_;
  std::map<std::string, rpc::RemoteFunction> functions_;
  std::vector<rpc::RemoteArray> buffers_;
};

// The result of one kernel's run on a session: the runner's report parsed, or the failure.
MeasureResult RunOn(DeviceSession& device, const KernelFiles& kernel, const std::string& reference,
                    bool write_reference, const MeasureOptions& options) {
  const rpc::Session& session = *device.session;
  try {
    RemoteKernelHost host(device);
    return ParseReport(CheckAndTime(host, kernel.library, kernel.description, reference,
                                    write_reference, options));
  } catch (const std::exception& e) {
    MeasureResult result;
    result.error = session.timed_out() ? MeasureError::kTimeout : MeasureError::kRuntimeError;
    result.message = std::string("on ") + session.address().str() + ": " + e.what();
    return result;
  }
}

}  // namespace

std::vector<MeasureResult> MeasureOnRemoteDevices(const std::vector<KernelFiles>& kernels,
                                                  const std::string& reference,
                                                  bool write_reference,
                                                  const MeasureOptions& options) {
  const RemoteDevices& remote = options.remote;
  int devices =
      rpc::TrackerClient(rpc::ParseAddress(remote.tracker, "the tuner's tracker"), remote.key)
          .RequireDevices(remote.device_key);
  if (remote.max_devices > 0) devices = std::min(devices, remote.max_devices);
  devices = std::min<int>(devices, static_cast<int>(kernels.size()));
  std::vector<MeasureResult> results(kernels.size());
  std::atomic<size_t> next{0};
  rpc::SessionOptions session_options;
  session_options.call_timeout_s = options.run_timeout_s;

  auto worker = [&] {
    std::unique_ptr<rpc::TrackerClient> tracker;
    std::optional<rpc::Lease> lease;
    DeviceSession device;
    std::shared_ptr<rpc::Session>& session = device.session;
    for (size_t i = next++; i < kernels.size(); i = next++) {
      // A session that ended (a kernel crashed there) is opened again on the same device; a
      // device that cannot be reached is given back and another one asked for.
      std::string failure;
      for (int attempt = 0; attempt < 3 && !(session && session->open()); ++attempt) {
        try {
          if (!tracker) {
            tracker = std::make_unique<rpc::TrackerClient>(
                rpc::ParseAddress(remote.tracker, "the tuner's tracker"), remote.key);
          }
          if (!lease) lease = tracker->Request(remote.device_key, remote.request_timeout_s);
          device.modules.clear();  // they went with the session
          session = rpc::Session::Connect(lease->server, remote.key, session_options);
        } catch (const std::exception& e) {
          failure = e.what();
          session.reset();
          lease.reset();
          tracker.reset();  // its leases go with its connection
        }
      }
      if (!(session && session->open())) {
        results[i].error = MeasureError::kRuntimeError;
        results[i].message = "no '" + remote.device_key + "' device could be used: " + failure;
        continue;
      }
      results[i] = RunOn(device, kernels[i], reference, write_reference, options);
    }
  };
  std::vector<std::thread> threads;
  for (int d = 0; d < devices; ++d) threads.emplace_back(worker);
  for (std::thread& thread : threads) thread.join();
  return results;
}

}  // namespace loom::autotune
