// The client side of a session on a `loom rpc server`: remote modules, functions, executors
// and arrays, used much as their local counterparts are. Handles hold their session; a
// handle's destructor frees it on the server (best effort: a session that ended has freed it
// already). A session is used by one thread at a time.
//
//   auto session = Session::Connect(ParseAddress("127.0.0.1:9090", "--rpc"), key);
//   session->Upload("resnet18.so", "model.so");
//   RemoteExecutor model = session->LoadExecutor("model.so");
//   model.SetInput(0, image);          // a host NDArray, copied over
//   model.Run();
//   runtime::NDArray logits = model.GetOutput(0);   // copied back
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "loom/rpc/protocol.h"
#include "loom/runtime/executor.h"
#include "loom/runtime/ndarray.h"

namespace loom::rpc {

struct SessionOptions {
  double connect_timeout_s = 10;
  // How long one request may take before the client gives up on the session (a kernel that
  // hangs on the device): the connection is then closed.
  double call_timeout_s = 600;
  // The largest message sent or accepted; uploads and arrays travel in parts of this size.
  size_t max_message_bytes = size_t{16} << 20;
};

class Session;

// A handle the server handed out, freed there when the last copy dies.
class RemoteHandle {
 public:
  RemoteHandle() = default;
  RemoteHandle(std::shared_ptr<Session> session, HandleKind kind, uint32_t id);
  uint32_t id() const { return state_ ? state_->id : 0; }
  bool defined() const { return state_ != nullptr; }
  Session& session() const { return *state_->session; }

 private:
  struct State {
    State(std::shared_ptr<Session> session, HandleKind kind, uint32_t id)
        : session(std::move(session)), kind(kind), id(id) {}
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    ~State();
    std::shared_ptr<Session> session;
    HandleKind kind;
    uint32_t id;
  };
  std::shared_ptr<State> state_;
};

// An array in the server's memory.
class RemoteArray {
 public:
  RemoteArray() = default;
  RemoteArray(RemoteHandle handle, DataType dtype, std::vector<int64_t> shape)
      : handle_(std::move(handle)), dtype_(dtype), shape_(std::move(shape)) {}
  const RemoteHandle& handle() const { return handle_; }
  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  size_t NumBytes() const;
  // Copies a host array of the same dtype and shape to the server.
  void CopyFrom(const runtime::NDArray& host) const;
  // A new host array holding the server's values.
  runtime::NDArray ToHost() const;

 private:
  RemoteHandle handle_;
  DataType dtype_ = DataType::Float(32);
  std::vector<int64_t> shape_;
};

class RemoteFunction {
 public:
  RemoteFunction() = default;
  RemoteFunction(RemoteHandle handle, std::string name)
      : handle_(std::move(handle)), name_(std::move(name)) {}
  const std::string& name() const { return name_; }
  void Call(const std::vector<RemoteArray>& arguments) const;
  // Seconds per call, one per repeat (time_evaluator; TimeRequest says how).
  std::vector<double> Time(const std::vector<RemoteArray>& arguments,
                           const TimeRequest& request) const;

 private:
  RemoteHandle handle_;
  std::string name_;
};

class RemoteModule {
 public:
  RemoteModule() = default;
  explicit RemoteModule(RemoteHandle handle) : handle_(std::move(handle)) {}
  // A missing function is a loom::Error from the server naming the module and the function.
  RemoteFunction GetFunction(const std::string& name) const;

 private:
  RemoteHandle handle_;
};

// A compiled model loaded by the server's runtime with the executor its artifact names,
// behind the same interface as a local one (`loom run` and `loom bench` take either).
class RemoteExecutor : public runtime::Executor {
 public:
  RemoteExecutor() = default;
  RemoteExecutor(RemoteHandle handle, ExecutorSignature signature)
      : handle_(std::move(handle)), signature_(std::move(signature)) {}
  const ExecutorSignature& signature() const { return signature_; }

  const char* kind() const override { return signature_.kind.c_str(); }
  int NumInputs() const override { return static_cast<int>(signature_.inputs.size()); }
  int NumOutputs() const override { return static_cast<int>(signature_.outputs.size()); }
  const std::string& InputName(int i) const override { return Input(i).name; }
  const std::string& OutputName(int i) const override;
  DataType InputDtype(int i) const override { return Input(i).dtype; }
  std::vector<int64_t> InputShape(int i) const override { return Input(i).shape; }
  std::string InputSignature(int i) const override { return Input(i).signature; }
  // Copies `value` to the server and sets it (checked there as a local executor checks it).
  void SetInput(const std::string& name, const runtime::NDArray& value) override;
  void SetInput(int index, const runtime::NDArray& value) override;
  void Run() override;
  // Sizes the session's pool: only before anything ran in the session.
  void SetNumThreads(int num_threads) override;
  // Copied back to this process.
  runtime::NDArray GetOutput(int index) const override;
  // Not available remotely: a loom::Error saying to profile on the device.
  std::vector<KernelTime> ProfileKernels(int repeat) override;

  // Seconds of each of `repeat` runs after `warmup` untimed ones, timed on the device.
  std::vector<double> TimeRuns(int warmup, int repeat) const;

 private:
  const ExecutorSignature::Input& Input(int index) const;

  RemoteHandle handle_;
  ExecutorSignature signature_;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  // Connects and says hello. A refusal (wrong key, another protocol version, a busy server)
  // is a loom::Error with the server's reason.
  static std::shared_ptr<Session> Connect(const Address& server, const std::string& key,
                                          const SessionOptions& options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const DeviceInfo& device() const { return device_; }
  const Address& address() const { return address_; }
  bool open() const { return socket_.valid(); }
  // Whether the session was closed because a request got no answer within call_timeout_s.
  bool timed_out() const { return timed_out_; }

  // Uploads a local file (or bytes) as `name` in the session's folder on the server.
  void Upload(const std::string& local_path, const std::string& name);
  void UploadBytes(const std::string& bytes, const std::string& name);
  RemoteModule LoadModule(const std::string& name);
  RemoteExecutor LoadExecutor(const std::string& name);
  RemoteArray Empty(const std::vector<int64_t>& shape, DataType dtype);
  // A remote copy of a host array.
  RemoteArray CopyOf(const runtime::NDArray& host);
  // The server's thread pool for this session, before anything runs (0: one per core);
  // returns its size.
  int SetThreads(int threads);
  // Ends the session on the server and closes the connection (also done by the destructor).
  void Close();

  // The largest part of an upload or an array one message carries.
  size_t max_part_bytes() const;

  // One request: its reply's results (after the status byte); an error reply is a
  // loom::Error carrying the server's message. A broken connection closes the session.
  std::string Call(const Writer& request, Op op);

 private:
  Session(Address address, Socket socket, SessionOptions options)
      : address_(std::move(address)), socket_(std::move(socket)), options_(options) {}

  Address address_;
  Socket socket_;
  SessionOptions options_;
  DeviceInfo device_;
  size_t server_max_message_bytes_ = 0;  // from the hello reply
  bool timed_out_ = false;
};

}  // namespace loom::rpc
