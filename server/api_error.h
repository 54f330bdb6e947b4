// The errors the server answers with, in OpenAI's shape:
//   {"error": {"message": M, "type": T, "param": P|null, "code": C|null}}
// with the HTTP status that says what went wrong (docs/serving.md, "Errors").
#pragma once
#include <string>

#include "absl/status/status.h"

namespace uaii::server {

struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // the request field at fault; "" for none (null)
  std::string code;   // a machine-readable code ("invalid_api_key"); "" for none (null)
};

// Every field named (designated initializers that leave some out warn under -Wextra).
ApiError MakeError(int status, std::string message, std::string type, std::string code = "", std::string param = "");
ApiError BadRequest(std::string message, std::string param = "");
// A library status as the error a client sees: InvalidArgument / OutOfRange /
// NotFound (a bad messages array, a prompt past the context) are the request's fault
// (400), anything else the server's (500).
ApiError FromStatus(const absl::Status& status, std::string param = "");

std::string ErrorJson(const ApiError& e);

}  // namespace uaii::server
