// The dashboard page GET / serves: one static HTML file (server/dashboard.html, no
// build step) embedded in the binary at build time; it reads /metrics every second
// and talks to /v1/chat/completions for its chat box.
#pragma once
#include <string_view>

namespace uaii::server {
std::string_view DashboardHtml();
}
