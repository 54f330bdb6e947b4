#include "api_error.h"

#include "uaii/json_writer.h"

namespace uaii::server {

ApiError MakeError(int status, std::string message, std::string type, std::string code, std::string param) {
  ApiError e;
  e.status = status;
  e.message = std::move(message);
  e.type = std::move(type);
  e.code = std::move(code);
  e.param = std::move(param);
  return e;
}

ApiError BadRequest(std::string message, std::string param) {
  return MakeError(400, std::move(message), "invalid_request_error", "", std::move(param));
}

ApiError FromStatus(const absl::Status& status, std::string param) {
  ApiError e;
  e.message = std::string(status.message());
  e.param = std::move(param);
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kFailedPrecondition:
      e.status = 400;
      break;
    case absl::StatusCode::kOutOfRange:
      e.status = 400;
      e.code = "context_length_exceeded";
      break;
    default:
      e.status = 500;
      e.type = "server_error";
      break;
  }
  return e;
}

std::string ErrorJson(const ApiError& e) {
  JsonWriter w;
  w.BeginObject().Key("error").BeginObject();
  w.Key("message").String(e.message);
  w.Key("type").String(e.type);
  w.Key("param");
  e.param.empty() ? w.Null() : w.String(e.param);
  w.Key("code");
  e.code.empty() ? w.Null() : w.String(e.code);
  w.EndObject().EndObject();
  return w.str();
}

}  // namespace uaii::server
