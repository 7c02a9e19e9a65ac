// A session's requests (protocol.h), each answered with one reply. Handles - modules,
// functions, executors, arrays - are numbers the session hands out and checks on every use;
// a request naming one it did not hand out is an error reply, as is anything the runtime
// refuses. Only a frame that breaks the framing (over the size limit, cut off) ends the
// session, since nothing after it can be trusted to start a frame.
#include "session.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "loom/rpc/protocol.h"
#include "loom/rpc/tracker.h"
#include "loom/runtime/executor.h"
#include "loom/runtime/module.h"
#include "loom/runtime/ndarray.h"
#include "loom/runtime/thread_pool.h"
#include "loom/runtime/time_evaluator.h"
#include "loom/support/error.h"

namespace loom::rpc {

namespace {

// How long a session ending on a bad message waits for the rest of it before closing.
constexpr double kDrainSeconds = 2;

void Log(const std::string& line) {
  std::fprintf(stderr, "loom rpc server: session %d: %s\n", static_cast<int>(getpid()),
               line.c_str());
}

std::string ErrorReply(const std::string& message) {
  Writer w;
  w.U8(static_cast<uint8_t>(Reply::kError)).Str(message);
  return w.data();
}

// A name an upload may have: one plain file name inside the session's folder.
void CheckUploadName(const std::string& name) {
  LOOM_CHECK_USER(!name.empty() && name.size() <= 255)
      << "upload name '" << name << "': expected a file name of 1 to 255 characters";
  LOOM_CHECK_USER(name.front() != '/')
      << "upload name '" << name << "': an absolute path; uploads go into the session's folder, "
      << "give a plain file name";
  LOOM_CHECK_USER(name != "." && name != ".." && name.find('/') == std::string::npos &&
                  name.find('\0') == std::string::npos)
      << "upload name '" << name << "': a path (with '/' or '..'); uploads go into the "
      << "session's folder, give a plain file name";
}

class Session {
 public:
  Session(int fd, std::string folder, const ServerOptions& options)
      : fd_(fd), folder_(std::move(folder)), options_(options), max_call_s_(options.max_call_s) {}

  void Serve();

 private:
  // False when the client was refused (its reply sent).
  bool Hello(const std::string& payload);
  // One request's ok reply; sets *close for kClose.
  std::string Handle(Op op, Reader& r, bool* close);

  std::string Upload(Reader& r);
  std::string LoadModule(Reader& r);
  std::string GetFunction(Reader& r);
  std::string LoadExecutor(Reader& r);
  std::string AllocArray(Reader& r);
  std::string WriteArray(Reader& r);
  std::string ReadArray(Reader& r);
  std::string Free(Reader& r);
  std::string CallFunction(Reader& r, bool timed);
  std::string SetInput(Reader& r);
  std::string GetOutput(Reader& r);
  std::string TimeRuns(Reader& r);
  std::string SetThreads(Reader& r);

  // The path of an uploaded file about to be loaded, checked to be a regular file (not a link)
  // the session wrote.
  std::string UploadedFile(const std::string& name);
  uint32_t NewHandle() { return ++last_handle_; }
  // A loom::Error when `bytes` more would pass the session's limit on arrays.
  void CheckArrayRoom(uint64_t bytes) const;
  uint32_t AddArray(runtime::NDArray array);
  template <typename Map>
  typename Map::mapped_type& Find(Map& map, uint32_t handle, const char* kind);
  std::vector<runtime::NDArray> ArrayList(Reader& r);

  int fd_;
  std::string folder_;
  const ServerOptions& options_;
  double max_call_s_;  // the server's limit, or the client's when it is shorter
  uint64_t uploaded_bytes_ = 0;
  uint64_t array_bytes_ = 0;
  std::map<std::string, uint64_t> upload_sizes_;
  std::set<std::string> loaded_;  // uploads loaded as modules or models
  uint32_t last_handle_ = 0;
  std::map<uint32_t, runtime::Module> modules_;
  std::map<uint32_t, runtime::PackedFunc> functions_;
  std::map<uint32_t, std::unique_ptr<runtime::Executor>> executors_;
  std::map<uint32_t, runtime::NDArray> arrays_;
};

std::string Ok() {
  Writer w;
  w.U8(static_cast<uint8_t>(Reply::kOk));
  return w.data();
}

Writer OkWriter() {
  Writer w;
  w.U8(static_cast<uint8_t>(Reply::kOk));
  return w;
}

// The reply of a request that hands out one handle.
std::string HandleReply(uint32_t handle) {
  Writer w = OkWriter();
  w.U32(handle);
  return w.data();
}

template <typename Map>
typename Map::mapped_type& Session::Find(Map& map, uint32_t handle, const char* kind) {
  auto it = map.find(handle);
  LOOM_CHECK_USER(it != map.end())
      << "no " << kind << " " << handle << " in this session (freed, or never handed out)";
  return it->second;
}

void Session::Serve() {
  std::string payload;
  // The hello comes first, promptly.
  FrameStatus status = RecvFrame(fd_, 1 << 16, std::min(options_.idle_timeout_s, 60.0), &payload);
  if (status != FrameStatus::kOk || !Hello(payload)) return;
  while (true) {
    try {
      status = RecvFrame(fd_, options_.max_message_bytes, options_.idle_timeout_s, &payload);
    } catch (const Error& e) {
      Log(e.what());
      SendLastFrame(fd_, ErrorReply(e.what()), kDrainSeconds);
      return;
    }
    if (status == FrameStatus::kClosed) return;
    if (status == FrameStatus::kTimeout) {
      Log("idle for " + std::to_string(static_cast<int>(options_.idle_timeout_s)) +
          " s (--idle-timeout-s); closing it");
      return;
    }
    std::string reply;
    bool close = false;
    const char* what = "request";
    try {
      Reader r(payload, "request");
      const Op op = static_cast<Op>(r.U8());
      what = OpName(op);
      // A request that runs past the limit (a kernel that never returns) ends the session's
      // process; the client sees its connection close.
      alarm(static_cast<unsigned>(std::ceil(max_call_s_)));
      reply = Handle(op, r, &close);
      alarm(0);
    } catch (const std::exception& e) {
      alarm(0);
      reply = ErrorReply(std::string(what) + ": " + e.what());
    }
    try {
      SendFrame(fd_, reply);
    } catch (const Error&) {
      return;  // the client went away
    }
    if (close) return;
  }
}

bool Session::Hello(const std::string& payload) {
  std::string refusal;
  try {
    Reader r(payload, "hello");
    const Op op = static_cast<Op>(r.U8());
    const uint32_t magic = r.U32();
    if (op != Op::kHello || magic != kMagic) {
      refusal = "not a Loom RPC client (the first message must be a Loom hello)";
    } else if (const uint32_t version = r.U32(); version != kProtocolVersion) {
      refusal = "protocol version mismatch: the server speaks version " +
                std::to_string(kProtocolVersion) + ", the client " + std::to_string(version) +
                "; use the same Loom release on both sides";
    } else if (const std::string key = r.Str(4096);
               !options_.key.empty() && !KeysMatch(options_.key, key)) {
      refusal = "wrong key: the server requires the key it was started with (--key/--key-file)";
    } else if (const double limit = r.F64(); limit > 0 && limit < max_call_s_) {
      max_call_s_ = limit;  // the client gives up sooner: a hung request ends then
    }
    if (refusal.empty()) r.ExpectEnd();
  } catch (const Error& e) {
    refusal = e.what();
  }
  if (!refusal.empty()) {
    Log("refused: " + refusal);
    SendLastFrame(fd_, ErrorReply(refusal), kDrainSeconds);
    return false;
  }
  Writer w = OkWriter();
  // The client sends uploads and arrays in parts that fit this server's limit.
  w.U32(kProtocolVersion).U64(options_.max_message_bytes);
  HostDeviceInfo(options_.device_key).Write(w);
  SendFrame(fd_, w.data());
  return true;
}

std::string Session::Handle(Op op, Reader& r, bool* close) {
  switch (op) {
    case Op::kUpload:
      return Upload(r);
    case Op::kLoadModule:
      return LoadModule(r);
    case Op::kGetFunction:
      return GetFunction(r);
    case Op::kLoadExecutor:
      return LoadExecutor(r);
    case Op::kAllocArray:
      return AllocArray(r);
    case Op::kWriteArray:
      return WriteArray(r);
    case Op::kReadArray:
      return ReadArray(r);
    case Op::kFree:
      return Free(r);
    case Op::kCallFunction:
      return CallFunction(r, /*timed=*/false);
    case Op::kTimeFunction:
      return CallFunction(r, /*timed=*/true);
    case Op::kSetInput:
      return SetInput(r);
    case Op::kRun: {
      runtime::Executor& executor = *Find(executors_, r.U32(), "executor");
      r.ExpectEnd();
      executor.Run();
      return Ok();
    }
    case Op::kGetOutput:
      return GetOutput(r);
    case Op::kTimeRuns:
      return TimeRuns(r);
    case Op::kSetThreads:
      return SetThreads(r);
    case Op::kClose:
      r.ExpectEnd();
      *close = true;
      return Ok();
    case Op::kHello:
      LOOM_THROW << "the session is open already; a hello comes only first";
  }
  LOOM_THROW << "unknown request " << static_cast<int>(op)
             << " (this server speaks protocol version " << kProtocolVersion << ")";
}

std::string Session::Upload(Reader& r) {
  const std::string name = r.Str(4096);
  const uint64_t offset = r.U64();
  const std::string_view bytes = r.Blob();
  r.ExpectEnd();
  CheckUploadName(name);
  uint64_t& size = upload_sizes_[name];
  if (offset == 0) {
    // A new upload under the name replaces the file. A library the session loaded stays
    // mapped: the runtime would hand the old code back for the same path.
    LOOM_CHECK_USER(loaded_.count(name) == 0)
        << "upload '" << name << "': this session loaded it already; upload the new file under "
        << "another name";
    uploaded_bytes_ -= size;
    size = 0;
  }
  LOOM_CHECK_USER(offset == size)
      << "upload '" << name << "': a part at offset " << offset << ", but " << size
      << " bytes are there (send the parts in order, the first at offset 0)";
  LOOM_CHECK_USER(uploaded_bytes_ + bytes.size() <= options_.max_upload_bytes)
      << "upload '" << name << "': the session's uploads would pass the server's limit of "
      << options_.max_upload_bytes << " bytes (--max-upload-mb)";
  const std::string path = folder_ + "/" + name;
  const int flags =
      O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (offset == 0 ? O_TRUNC : O_APPEND);
  const int fd = open(path.c_str(), flags, 0600);
  LOOM_CHECK_USER(fd >= 0) << "upload '" << name << "': cannot write it: " << std::strerror(errno);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      close(fd);
      LOOM_THROW << "upload '" << name << "': writing failed: " << why;
    }
    done += static_cast<size_t>(n);
  }
  close(fd);
  size += bytes.size();
  uploaded_bytes_ += bytes.size();
  return Ok();
}

std::string Session::UploadedFile(const std::string& name) {
  CheckUploadName(name);
  LOOM_CHECK_USER(upload_sizes_.count(name) != 0)
      << "'" << name << "' was not uploaded in this session (upload it first)";
  const std::string path = folder_ + "/" + name;
  struct stat info {};
  LOOM_CHECK_USER(lstat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode))
      << "'" << name << "' is not a regular file in the session's folder";
  loaded_.insert(name);
  return path;
}

std::string Session::LoadModule(Reader& r) {
  const std::string name = r.Str(4096);
  r.ExpectEnd();
  runtime::Module module = runtime::LoadModuleFromFile(UploadedFile(name));
  const uint32_t handle = NewHandle();
  modules_[handle] = module;
  return HandleReply(handle);
}

std::string Session::GetFunction(Reader& r) {
  const runtime::Module& module = Find(modules_, r.U32(), "module");
  const std::string name = r.Str(4096);
  r.ExpectEnd();
  runtime::PackedFunc function = module.GetRequiredFunction(name);
  const uint32_t handle = NewHandle();
  functions_[handle] = function;
  return HandleReply(handle);
}

std::string Session::LoadExecutor(Reader& r) {
  const std::string name = r.Str(4096);
  r.ExpectEnd();
  std::unique_ptr<runtime::Executor> executor = runtime::LoadExecutor(UploadedFile(name));
  ExecutorSignature signature;
  signature.kind = executor->kind();
  for (int i = 0; i < executor->NumInputs(); ++i) {
    signature.inputs.push_back({executor->InputName(i), executor->InputDtype(i),
                                executor->InputShape(i), executor->InputSignature(i)});
  }
  for (int i = 0; i < executor->NumOutputs(); ++i) {
    signature.outputs.push_back(executor->OutputName(i));
  }
  const uint32_t handle = NewHandle();
  executors_[handle] = std::move(executor);
  Writer w = OkWriter();
  w.U32(handle);
  signature.Write(w);
  return w.data();
}

void Session::CheckArrayRoom(uint64_t bytes) const {
  LOOM_CHECK_USER(array_bytes_ + bytes <= options_.max_array_bytes)
      << "an array of " << bytes << " bytes would pass the session's limit of "
      << options_.max_array_bytes << " bytes of arrays (--max-array-mb); free arrays first";
}

uint32_t Session::AddArray(runtime::NDArray array) {
  const uint64_t bytes = array.NumBytes();
  CheckArrayRoom(bytes);
  array_bytes_ += bytes;
  const uint32_t handle = NewHandle();
  arrays_[handle] = std::move(array);
  return handle;
}

std::string Session::AllocArray(Reader& r) {
  const DataType dtype = r.Dtype();
  const std::vector<int64_t> shape = r.Shape();
  r.ExpectEnd();
  // The reader caps a shape at 2^40 elements and a dtype at 64 x 64 bits: no overflow here.
  uint64_t bytes = dtype.bytes();
  for (int64_t extent : shape) bytes *= static_cast<uint64_t>(extent);
  CheckArrayRoom(bytes);  // before the memory is taken
  return HandleReply(AddArray(runtime::NDArray::Empty(shape, dtype)));
}

std::string Session::WriteArray(Reader& r) {
  const runtime::NDArray& array = Find(arrays_, r.U32(), "array");
  const uint64_t offset = r.U64();
  const std::string_view bytes = r.Blob();
  r.ExpectEnd();
  LOOM_CHECK_USER(offset <= array.NumBytes() && bytes.size() <= array.NumBytes() - offset)
      << "writing " << bytes.size() << " bytes at offset " << offset << " of an array of "
      << array.NumBytes() << " bytes";
  std::memcpy(static_cast<char*>(array.data()) + offset, bytes.data(), bytes.size());
  return Ok();
}

std::string Session::ReadArray(Reader& r) {
  const runtime::NDArray& array = Find(arrays_, r.U32(), "array");
  const uint64_t offset = r.U64(), size = r.U64();
  r.ExpectEnd();
  LOOM_CHECK_USER(offset <= array.NumBytes() && size <= array.NumBytes() - offset &&
                  size + 64 <= options_.max_message_bytes)
      << "reading " << size << " bytes at offset " << offset << " of an array of "
      << array.NumBytes() << " bytes (a reply carries at most the message limit, "
      << options_.max_message_bytes << " bytes)";
  Writer w = OkWriter();
  w.Blob(std::string_view(static_cast<const char*>(array.data()) + offset, size));
  return w.data();
}

std::string Session::Free(Reader& r) {
  const auto kind = static_cast<HandleKind>(r.U8());
  const uint32_t handle = r.U32();
  r.ExpectEnd();
  switch (kind) {
    case HandleKind::kModule:
      Find(modules_, handle, "module");
      modules_.erase(handle);
      break;
    case HandleKind::kFunction:
      Find(functions_, handle, "function");
      functions_.erase(handle);
      break;
    case HandleKind::kExecutor:
      Find(executors_, handle, "executor");
      executors_.erase(handle);
      break;
    case HandleKind::kArray:
      array_bytes_ -= Find(arrays_, handle, "array").NumBytes();
      arrays_.erase(handle);
      break;
    default:
      LOOM_THROW << "unknown handle kind " << static_cast<int>(kind);
  }
  return Ok();
}

std::vector<runtime::NDArray> Session::ArrayList(Reader& r) {
  const uint32_t count = r.U32();
  LOOM_CHECK_USER(count <= 4096) << count << " arguments (at most 4096)";
  std::vector<runtime::NDArray> arrays;
  for (uint32_t i = 0; i < count; ++i) arrays.push_back(Find(arrays_, r.U32(), "array"));
  return arrays;
}

std::string Session::CallFunction(Reader& r, bool timed) {
  const runtime::PackedFunc function = Find(functions_, r.U32(), "function");
  const std::vector<runtime::NDArray> arguments = ArrayList(r);
  if (!timed) {
    r.ExpectEnd();
    function.CallWithArrays(arguments);
    return Ok();
  }
  const TimeRequest request = TimeRequest::Read(r);
  r.ExpectEnd();
  LOOM_CHECK_USER(request.repeat >= 1 && request.repeat <= 10000 && request.number <= 100000000)
      << "timing: repeat must be 1 to 10000 and number at most 10^8";
  const std::vector<double> seconds =
      runtime::TimeFunction(function, arguments, request.ToOptions());
  Writer w = OkWriter();
  w.U32(static_cast<uint32_t>(seconds.size()));
  for (double s : seconds) w.F64(s);
  return w.data();
}

std::string Session::SetInput(Reader& r) {
  runtime::Executor& executor = *Find(executors_, r.U32(), "executor");
  const uint32_t index = r.U32();
  const runtime::NDArray& array = Find(arrays_, r.U32(), "array");
  r.ExpectEnd();
  LOOM_CHECK_USER(index < static_cast<uint32_t>(executor.NumInputs()))
      << "input " << index << ": the model has " << executor.NumInputs() << " inputs";
  executor.SetInput(static_cast<int>(index), array);
  return Ok();
}

std::string Session::GetOutput(Reader& r) {
  runtime::Executor& executor = *Find(executors_, r.U32(), "executor");
  const uint32_t index = r.U32();
  r.ExpectEnd();
  LOOM_CHECK_USER(index < static_cast<uint32_t>(executor.NumOutputs()))
      << "output " << index << ": the model has " << executor.NumOutputs() << " outputs";
  // A copy: the executor's own output is overwritten by the next run.
  runtime::NDArray output =
      executor.GetOutput(static_cast<int>(index)).CopyTo(runtime::kHostDevice);
  Writer w = OkWriter();
  w.U32(AddArray(output)).Dtype(output.dtype()).Shape(output.Shape());
  return w.data();
}

std::string Session::TimeRuns(Reader& r) {
  runtime::Executor& executor = *Find(executors_, r.U32(), "executor");
  const uint32_t warmup = r.U32(), repeat = r.U32();
  r.ExpectEnd();
  LOOM_CHECK_USER(repeat >= 1 && repeat <= 100000 && warmup <= 100000)
      << "timing runs: repeat must be 1 to 100000 and warmup at most 100000";
  const std::vector<double> seconds =
      runtime::TimeRuns(executor, static_cast<int>(warmup), static_cast<int>(repeat));
  Writer w = OkWriter();
  w.U32(repeat);
  for (double s : seconds) w.F64(s);
  return w.data();
}

std::string Session::SetThreads(Reader& r) {
  const uint32_t threads = r.U32();
  r.ExpectEnd();
  LOOM_CHECK_USER(threads <= 256) << "threads: at most 256, got " << threads;
  Writer w = OkWriter();
  if (threads > 0) {
    // The pool starts with its first use, at this size.
    runtime::ThreadPool::SetGlobalThreads(static_cast<int>(threads));
    w.U32(threads);
  } else {
    w.U32(static_cast<uint32_t>(runtime::ThreadPool::Global().num_threads()));
  }
  return w.data();
}

}  // namespace

void ServeSession(int fd, const std::string& folder, const ServerOptions& options) {
  Session session(fd, folder, options);
  try {
    session.Serve();
  } catch (const std::exception& e) {
    Log(std::string("ended: ") + e.what());
  }
}

}  // namespace loom::rpc
