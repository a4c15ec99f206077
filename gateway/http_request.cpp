#include "gateway/http_request.hpp"

#include <http_parser.h>

#include <algorithm>
#include <cctype>

#include "messages/ascii_text.hpp"

namespace sessionrt::gateway {

namespace {

}  // namespace

struct http_request::impl {
  http_parser parser{};
  http_parser_settings settings{};
  http_request* self = nullptr;

  static http_request& of(http_parser* p) { return *static_cast<impl*>(p->data)->self; }

  void end_header(http_request& r) {
    r.headers_[ascii_lower(r.field_)] = r.value_;
    r.field_.clear();
    r.value_.clear();
  }
};

http_request::http_request() : impl_(std::make_unique<impl>()) {
  impl_->self = this;
  http_parser_init(&impl_->parser, HTTP_REQUEST);
  impl_->parser.data = impl_.get();
  auto& s = impl_->settings;
  s.on_url = [](http_parser* p, const char* at, size_t len) {
    impl::of(p).url_.append(at, len);
    return 0;
  };
  s.on_header_field = [](http_parser* p, const char* at, size_t len) {
    auto& r = impl::of(p);
    if (r.last_was_value_) static_cast<impl*>(p->data)->end_header(r);
    r.last_was_value_ = false;
    r.field_.append(at, len);
    return 0;
  };
  s.on_header_value = [](http_parser* p, const char* at, size_t len) {
    auto& r = impl::of(p);
    r.last_was_value_ = true;
    r.value_.append(at, len);
    return 0;
  };
  s.on_headers_complete = [](http_parser* p) {
    auto& r = impl::of(p);
    if (!r.field_.empty()) static_cast<impl*>(p->data)->end_header(r);
    return 0;
  };
  s.on_message_complete = [](http_parser* p) {
    impl::of(p).complete_ = true;
    return 0;
  };
}

http_request::~http_request() = default;

http_request::state http_request::feed(const char* data, std::size_t len, std::size_t& used) {
  used = 0;
  if (state_ != state::partial) return state_;
  used = http_parser_execute(&impl_->parser, &impl_->settings, data, len);
  if (impl_->parser.upgrade) state_ = state::upgrade;
  else if (HTTP_PARSER_ERRNO(&impl_->parser) != HPE_OK) state_ = state::error;
  else if (complete_) state_ = state::complete;
  return state_;
}

std::string http_request::method() const {
  return http_method_str(static_cast<http_method>(impl_->parser.method));
}

std::string http_request::header(const std::string& lower_name) const {
  auto it = headers_.find(lower_name);
  return it == headers_.end() ? std::string() : it->second;
}

std::string http_request::error() const { return http_errno_description(HTTP_PARSER_ERRNO(&impl_->parser)); }

}  // namespace sessionrt::gateway
