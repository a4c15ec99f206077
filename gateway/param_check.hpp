// param_check: a method's params checked against a small schema, with messages in the real
// server's form (AJV through TypeBox):
//   invalid sessions.patch params: must have required property 'key'; at root: unexpected property 'nokey'
//   invalid chat.send params: at /message: must be string
// Several problems are joined with "; ". `closed` schemas refuse properties they do not list.
#pragma once
#include <boost/json.hpp>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "gateway/connection_state.hpp"

namespace sessionrt::gateway {

enum class ptype { string, nonempty_string, nullable_string, integer, positive_integer, boolean, object, array, any };

struct param_spec {
  std::string_view name;
  ptype type = ptype::any;
  bool required = false;
  // Strings: the most characters allowed (AJV's maxLength: Unicode code points); 0 = no limit.
  std::size_t max_length = 0;
};

// "invalid <method> params: <problem>", its fault bad_params (what check_params returns, and
// every handler's own params check).
frame_error params_error(std::string_view method, const std::string& problem);

std::optional<frame_error> check_params(std::string_view method, const boost::json::object& params,
                                        std::initializer_list<param_spec> specs, bool closed = false);

}  // namespace sessionrt::gateway
