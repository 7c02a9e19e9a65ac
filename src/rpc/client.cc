#include "loom/rpc/client.h"

#include <algorithm>
#include <fstream>
#include <iterator>

#include "loom/support/error.h"

namespace loom::rpc {

namespace {

// Room in a message for the fields around a part of an upload or an array.
constexpr size_t kMessageOverhead = 4096;

Writer Request(Op op) {
  Writer w;
  w.U8(static_cast<uint8_t>(op));
  return w;
}

// Calls send(offset, size) for each part of `total` bytes that one message carries, in order;
// once with size 0 for nothing (an empty upload still makes its file).
template <typename Send>
void ForEachPart(size_t total, size_t part, Send send) {
  size_t offset = 0;
  do {
    const size_t size = std::min(part, total - offset);
    send(offset, size);
    offset += size;
  } while (offset < total);
}

}  // namespace

RemoteHandle::RemoteHandle(std::shared_ptr<Session> session, HandleKind kind, uint32_t id)
    : state_(std::make_shared<State>(std::move(session), kind, id)) {}

RemoteHandle::State::~State() {
  if (!session->open()) return;
  try {
    session->Call(Request(Op::kFree).U8(static_cast<uint8_t>(kind)).U32(id), Op::kFree);
  } catch (const std::exception&) {
    // The session ended: the server freed everything with it.
  }
}

size_t RemoteArray::NumBytes() const {
  size_t bytes = static_cast<size_t>(dtype_.bytes());
  for (int64_t extent : shape_) bytes *= static_cast<size_t>(extent);
  return bytes;
}

void RemoteArray::CopyFrom(const runtime::NDArray& host) const {
  LOOM_CHECK_USER(host.dtype() == dtype_ && host.Shape() == shape_)
      << "copying to a remote array of " << dtype_ << " " << runtime::ShapeString(shape_)
      << ": the host array is " << host.dtype() << " " << runtime::ShapeString(host.Shape());
  LOOM_CHECK_USER(host.device().device_type == kDLCPU && host.IsContiguous())
      << "copying to a remote array: the source must be a compact host array";
  Session& session = handle_.session();
  const char* data = static_cast<const char*>(host.data());
  ForEachPart(NumBytes(), session.max_part_bytes(), [&](size_t offset, size_t size) {
    session.Call(Request(Op::kWriteArray)
                     .U32(handle_.id())
                     .U64(offset)
                     .Blob(std::string_view(data + offset, size)),
                 Op::kWriteArray);
  });
}

runtime::NDArray RemoteArray::ToHost() const {
  runtime::NDArray host = runtime::NDArray::Empty(shape_, dtype_);
  Session& session = handle_.session();
  char* data = static_cast<char*>(host.data());
  ForEachPart(NumBytes(), session.max_part_bytes(), [&](size_t offset, size_t size) {
    const std::string reply = session.Call(
        Request(Op::kReadArray).U32(handle_.id()).U64(offset).U64(size), Op::kReadArray);
    Reader r(reply, "array read reply");
    std::string_view bytes = r.Blob();
    r.ExpectEnd();
    if (bytes.size() != size) r.Malformed("a part of " + std::to_string(bytes.size()) + " bytes");
    std::copy(bytes.begin(), bytes.end(), data + offset);
  });
  return host;
}

namespace {

Writer ArgumentList(Op op, const RemoteHandle& function, const std::vector<RemoteArray>& args) {
  Writer w = Request(op);
  w.U32(function.id()).U32(static_cast<uint32_t>(args.size()));
  for (const RemoteArray& arg : args) w.U32(arg.handle().id());
  return w;
}

}  // namespace

void RemoteFunction::Call(const std::vector<RemoteArray>& arguments) const {
  handle_.session().Call(ArgumentList(Op::kCallFunction, handle_, arguments), Op::kCallFunction);
}

std::vector<double> RemoteFunction::Time(const std::vector<RemoteArray>& arguments,
                                         const TimeRequest& request) const {
  Writer w = ArgumentList(Op::kTimeFunction, handle_, arguments);
  request.Write(w);
  const std::string reply = handle_.session().Call(w, Op::kTimeFunction);
  Reader r(reply, "timing reply");
  std::vector<double> seconds(r.U32());
  if (seconds.size() != request.repeat) r.Malformed(std::to_string(seconds.size()) + " timings");
  for (double& s : seconds) s = r.F64();
  r.ExpectEnd();
  return seconds;
}

RemoteFunction RemoteModule::GetFunction(const std::string& name) const {
  Session& session = handle_.session();
  const std::string reply =
      session.Call(Request(Op::kGetFunction).U32(handle_.id()).Str(name), Op::kGetFunction);
  Reader r(reply, "function reply");
  const uint32_t id = r.U32();
  r.ExpectEnd();
  return RemoteFunction(RemoteHandle(session.shared_from_this(), HandleKind::kFunction, id), name);
}

const ExecutorSignature::Input& RemoteExecutor::Input(int index) const {
  LOOM_CHECK_USER(index >= 0 && index < NumInputs())
      << "input " << index << ": the remote model has " << NumInputs() << " inputs";
  return signature_.inputs[static_cast<size_t>(index)];
}

const std::string& RemoteExecutor::OutputName(int index) const {
  LOOM_CHECK_USER(index >= 0 && index < NumOutputs())
      << "output " << index << ": the remote model has " << NumOutputs() << " outputs";
  return signature_.outputs[static_cast<size_t>(index)];
}

void RemoteExecutor::SetInput(const std::string& name, const runtime::NDArray& value) {
  std::string names;
  for (int i = 0; i < NumInputs(); ++i) {
    if (InputName(i) == name) return SetInput(i, value);
    names += (i == 0 ? "" : ", ") + InputName(i);
  }
  LOOM_THROW << "the remote model has no input '" << name << "'; its inputs: " << names;
}

void RemoteExecutor::SetInput(int index, const runtime::NDArray& value) {
  Input(index);
  Session& session = handle_.session();
  RemoteArray remote = session.CopyOf(value);
  session.Call(Request(Op::kSetInput)
                   .U32(handle_.id())
                   .U32(static_cast<uint32_t>(index))
                   .U32(remote.handle().id()),
               Op::kSetInput);
}

void RemoteExecutor::SetNumThreads(int num_threads) { handle_.session().SetThreads(num_threads); }

std::vector<runtime::Executor::KernelTime> RemoteExecutor::ProfileKernels(int) {
  LOOM_THROW << "per-kernel profiles of a remote model are not available over RPC; run `loom "
             << "bench --profile` on the device itself";
}

void RemoteExecutor::Run() {
  handle_.session().Call(Request(Op::kRun).U32(handle_.id()), Op::kRun);
}

runtime::NDArray RemoteExecutor::GetOutput(int index) const {
  Session& session = handle_.session();
  const std::string reply = session.Call(
      Request(Op::kGetOutput).U32(handle_.id()).U32(static_cast<uint32_t>(index)), Op::kGetOutput);
  Reader r(reply, "output reply");
  const uint32_t id = r.U32();
  const DataType dtype = r.Dtype();
  std::vector<int64_t> shape = r.Shape();
  r.ExpectEnd();
  RemoteArray output(RemoteHandle(session.shared_from_this(), HandleKind::kArray, id), dtype,
                     std::move(shape));
  return output.ToHost();
}

std::vector<double> RemoteExecutor::TimeRuns(int warmup, int repeat) const {
  LOOM_CHECK_USER(warmup >= 0 && repeat >= 1)
      << "timing runs: warmup must not be negative and repeat at least 1";
  const std::string reply = handle_.session().Call(
      Request(Op::kTimeRuns).U32(handle_.id()).U32(warmup).U32(repeat), Op::kTimeRuns);
  Reader r(reply, "timing reply");
  std::vector<double> seconds(r.U32());
  if (seconds.size() != static_cast<size_t>(repeat)) {
    r.Malformed(std::to_string(seconds.size()) + " timings");
  }
  for (double& s : seconds) s = r.F64();
  r.ExpectEnd();
  return seconds;
}

std::shared_ptr<Session> Session::Connect(const Address& server, const std::string& key,
                                          const SessionOptions& options) {
  LOOM_CHECK_USER(options.max_message_bytes >= 2 * kMessageOverhead)
      << "rpc session: max_message_bytes must be at least " << 2 * kMessageOverhead;
  Socket socket = rpc::Connect(server, options.connect_timeout_s, "rpc session");
  std::shared_ptr<Session> session(new Session(server, std::move(socket), options));
  Writer hello = Request(Op::kHello);
  // The server ends a request past this limit: a little after the client gave up on it, so
  // the client sees its own timeout rather than a closed session.
  constexpr double kServerLimitMargin = 5;
  hello.U32(kMagic).U32(kProtocolVersion).Str(key).F64(options.call_timeout_s + kServerLimitMargin);
  const std::string reply = session->Call(hello, Op::kHello);
  Reader r(reply, "hello reply from " + server.str());
  const uint32_t version = r.U32();
  LOOM_CHECK_USER(version == kProtocolVersion)
      << "the server at " << server.str() << " speaks protocol version " << version
      << ", this client " << kProtocolVersion << "; use the same Loom release on both sides";
  session->server_max_message_bytes_ = r.U64();
  session->device_ = DeviceInfo::Read(r);
  r.ExpectEnd();
  return session;
}

Session::~Session() { Close(); }

size_t Session::max_part_bytes() const {
  const size_t limit = std::min(options_.max_message_bytes, server_max_message_bytes_);
  return limit > 2 * kMessageOverhead ? limit - kMessageOverhead : limit / 2;
}

std::string Session::Call(const Writer& request, Op op) {
  LOOM_CHECK_USER(socket_.valid())
      << "the session with " << address_.str() << " is closed; open a new one";
  std::string reply;
  FrameStatus status = FrameStatus::kClosed;
  try {
    bool sent = true;
    try {
      SendFrame(socket_.fd(), request.data());
    } catch (const Error&) {
      sent = false;  // the server closed; it may have said why first (a request over a limit)
    }
    status = RecvFrame(socket_.fd(), options_.max_message_bytes, sent ? options_.call_timeout_s : 1,
                       &reply);
    if (!sent && status == FrameStatus::kTimeout) status = FrameStatus::kClosed;
  } catch (const Error& e) {
    socket_.Close();
    LOOM_THROW << "the session with " << address_.str() << " broke during '" << OpName(op)
               << "': " << e.what();
  }
  if (status != FrameStatus::kOk) {
    socket_.Close();
    if (status == FrameStatus::kTimeout) {
      timed_out_ = true;
      LOOM_THROW << "the server at " << address_.str() << " did not answer '" << OpName(op)
                 << "' within " << options_.call_timeout_s << " s; the session is closed";
    }
    LOOM_THROW << "the server at " << address_.str() << " closed the session during '" << OpName(op)
               << "' (its session process ended: a kernel crashed, a request ran "
               << "past the server's --max-call-s, or the server stopped)";
  }
  Reader r(reply, "reply from " + address_.str());
  const auto kind = static_cast<Reply>(r.U8());
  if (kind == Reply::kError) {
    const std::string message = r.Str(1 << 20);
    if (op == Op::kHello) socket_.Close();
    LOOM_THROW << "server " << address_.str() << ": " << message;
  }
  if (kind != Reply::kOk) r.Malformed("reply status " + std::to_string(static_cast<int>(kind)));
  return reply.substr(1);
}

void Session::Upload(const std::string& local_path, const std::string& name) {
  std::ifstream in(local_path, std::ios::binary);
  LOOM_CHECK_USER(in.good()) << "upload: cannot read '" << local_path << "'";
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  UploadBytes(bytes, name);
}

void Session::UploadBytes(const std::string& bytes, const std::string& name) {
  ForEachPart(bytes.size(), max_part_bytes(), [&](size_t offset, size_t size) {
    Call(Request(Op::kUpload)
             .Str(name)
             .U64(offset)
             .Blob(std::string_view(bytes).substr(offset, size)),
         Op::kUpload);
  });
}

RemoteModule Session::LoadModule(const std::string& name) {
  const std::string reply = Call(Request(Op::kLoadModule).Str(name), Op::kLoadModule);
  Reader r(reply, "module reply");
  const uint32_t id = r.U32();
  r.ExpectEnd();
  return RemoteModule(RemoteHandle(shared_from_this(), HandleKind::kModule, id));
}

RemoteExecutor Session::LoadExecutor(const std::string& name) {
  const std::string reply = Call(Request(Op::kLoadExecutor).Str(name), Op::kLoadExecutor);
  Reader r(reply, "executor reply");
  const uint32_t id = r.U32();
  ExecutorSignature signature = ExecutorSignature::Read(r);
  r.ExpectEnd();
  return RemoteExecutor(RemoteHandle(shared_from_this(), HandleKind::kExecutor, id),
                        std::move(signature));
}

RemoteArray Session::Empty(const std::vector<int64_t>& shape, DataType dtype) {
  const std::string reply =
      Call(Request(Op::kAllocArray).Dtype(dtype).Shape(shape), Op::kAllocArray);
  Reader r(reply, "array reply");
  const uint32_t id = r.U32();
  r.ExpectEnd();
  return RemoteArray(RemoteHandle(shared_from_this(), HandleKind::kArray, id), dtype, shape);
}

RemoteArray Session::CopyOf(const runtime::NDArray& host) {
  RemoteArray remote = Empty(host.Shape(), host.dtype());
  remote.CopyFrom(host);
  return remote;
}

int Session::SetThreads(int threads) {
  LOOM_CHECK_USER(threads >= 0) << "threads must not be negative, got " << threads;
  const std::string reply = Call(Request(Op::kSetThreads).U32(threads), Op::kSetThreads);
  Reader r(reply, "threads reply");
  const uint32_t got = r.U32();
  r.ExpectEnd();
  return static_cast<int>(got);
}

void Session::Close() {
  if (!socket_.valid()) return;
  try {
    Call(Request(Op::kClose), Op::kClose);
  } catch (const std::exception&) {
  }
  socket_.Close();
}

}  // namespace loom::rpc
