// One client's session on a server, run in the child process the server forked for it.
#pragma once

#include <string>

#include "loom/rpc/server.h"

namespace loom::rpc {

// Serves the client connected on `fd` until it closes the session, goes idle past the
// options' limit or breaks the framing; its uploads go to `folder` (made for it, removed by
// the server). Returns normally in every case a client can cause.
void ServeSession(int fd, const std::string& folder, const ServerOptions& options);

}  // namespace loom::rpc
