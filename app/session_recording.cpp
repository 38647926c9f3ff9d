#include "app/session_recording.h"

#include <chrono>

#include "core/backend/backend.h"
#include "core/ir/error.h"

#ifdef FUSEBOX_HAVE_SESSIONS
#include "sessions/session_recorder.h"
#include "sessions/session_store.h"
#endif

namespace fusebox::cli {

#ifdef FUSEBOX_HAVE_SESSIONS

struct SessionRecording::Impl {
  SessionStore store;
  int64_t id = 0;
  std::string target;
  bool existing = false;
};

SessionRecording::SessionRecording(const std::string& path, const std::string& model, const PipelineConfig& config,
                                   std::optional<int64_t> existing)
    : impl_(new Impl{SessionStore::open(path, !existing), 0, config.target, existing.has_value()}) {
  impl_->id = existing ? impl_->store.session(*existing).id : impl_->store.createSession(model, describeConfig(config), config.target);
}

void SessionRecording::compile(Pipeline& p, Stage last) {
  if (impl_->existing) p.runUntil(last);
  else runAndRecord(p, impl_->store, impl_->id, last);
}

void SessionRecording::compileBackend(const Pipeline& p) { recordBackendCompile(impl_->store, impl_->id, p); }

RunHooks SessionRecording::runHooks() { return recordingHooks(impl_->store, impl_->id, impl_->store.beginRun(impl_->id), impl_->target); }
int64_t SessionRecording::id() const { return impl_->id; }
const std::string& SessionRecording::path() const { return impl_->store.path(); }

#else

struct SessionRecording::Impl {};

SessionRecording::SessionRecording(const std::string&, const std::string&, const PipelineConfig&, std::optional<int64_t>) {
  throw Error("--session: this fusebox was built without sessions (install libsqlite3-dev and libgraphviz-dev, then reconfigure)");
}
void SessionRecording::compile(Pipeline&, Stage) {}
void SessionRecording::compileBackend(const Pipeline&) {}
RunHooks SessionRecording::runHooks() { return {}; }
int64_t SessionRecording::id() const { return 0; }
const std::string& SessionRecording::path() const {
  static const std::string none;
  return none;
}

#endif

SessionRecording::~SessionRecording() = default;

}  // namespace fusebox::cli
