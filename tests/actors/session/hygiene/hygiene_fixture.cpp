#include "tests/actors/session/hygiene/hygiene_fixture.hpp"

#include <catch2/catch.hpp>
#include <stb_image_write.h>

#include "actors/session/hygiene/image_sanitizer.hpp"
#include "actors/session/hygiene/replay_message.hpp"
#include "messages/iso_time.hpp"
#include "messages/json_reader.hpp"
#include "messages/json_writer.hpp"
#include "storage/context_builder.hpp"
#include "storage/fs.hpp"
#include "tests/test_support.hpp"

namespace sessionrt::testing::hygiene_fixture {

boost::json::value j(std::string_view json) {
  auto v = json::parse(json);
  INFO(json);
  REQUIRE(v.ok());
  return std::move(*v);
}

std::string transcript_of(const std::vector<std::string>& items) {
  std::string text = R"({"type":"session","version":3,"id":"s1","timestamp":")" + format_iso_ms(kBaseMs - 1000) +
                     R"(","cwd":"/w"})" "\n";
  std::string parent;
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto v = j(items[i]);
    auto& o = v.as_object();
    const std::int64_t ts = kBaseMs + static_cast<std::int64_t>(i) * 1000;
    boost::json::object entry;
    if (o.contains("type")) {
      entry = o;
    } else {
      if (!o.contains("timestamp")) o["timestamp"] = ts;
      entry["type"] = "message";
      entry["message"] = o;
    }
    if (!entry.contains("id")) entry["id"] = "e" + std::to_string(i);
    if (!entry.contains("parentId")) entry["parentId"] = parent.empty() ? boost::json::value(nullptr) : boost::json::value(parent);
    if (!entry.contains("timestamp")) entry["timestamp"] = format_iso_ms(ts);
    parent = std::string(entry["id"].as_string());
    text += json::to_compact(entry) + "\n";
  }
  return text;
}

boost::json::array context_of(const std::vector<std::string>& items) {
  temp_dir dir;
  write_text(dir.file("s1.jsonl"), transcript_of(items));
  auto rd = storage::transcript_reader::open(storage::posix_fs(), dir.file("s1.jsonl"));
  REQUIRE(rd.ok());
  auto ctx = storage::build_context(**rd);
  REQUIRE(ctx.ok());
  return std::move(ctx->messages);
}

std::vector<std::string> roles(const boost::json::array& messages) {
  std::vector<std::string> out;
  for (const auto& m : messages) out.emplace_back(actors::hygiene::role_of(m));
  return out;
}

std::string texts(const boost::json::value& message) {
  const auto& c = message.as_object().at("content");
  if (c.is_string()) return std::string(c.get_string());
  std::string out;
  for (const auto& b : c.as_array()) {
    if (actors::hygiene::block_type(b) != "text") continue;
    if (!out.empty()) out += "|";
    out += std::string(b.as_object().at("text").as_string());
  }
  return out;
}

std::vector<std::string> block_types(const boost::json::value& message) {
  std::vector<std::string> out;
  if (const auto* c = actors::hygiene::content_array(message))
    for (const auto& b : *c) out.emplace_back(actors::hygiene::block_type(b));
  return out;
}

namespace {
void append(void* ctx, void* data, int size) { static_cast<std::string*>(ctx)->append(static_cast<char*>(data), size); }
std::vector<unsigned char> gradient(int w, int h, int channels) {
  std::vector<unsigned char> px(static_cast<std::size_t>(w) * h * channels);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < channels; ++c)
        px[(static_cast<std::size_t>(y) * w + x) * channels + c] = static_cast<unsigned char>((x * 7 + y * 3 + c * 50) & 0xFF);
  return px;
}
}  // namespace

std::string png_base64(int w, int h, int channels) {
  auto px = gradient(w, h, channels);
  std::string bytes;
  REQUIRE(stbi_write_png_to_func(append, &bytes, w, h, channels, px.data(), w * channels));
  return actors::hygiene::encode_base64(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

std::string jpeg_base64(int w, int h) {
  auto px = gradient(w, h, 3);
  std::string bytes;
  REQUIRE(stbi_write_jpg_to_func(append, &bytes, w, h, 3, px.data(), 90));
  return actors::hygiene::encode_base64(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

}  // namespace sessionrt::testing::hygiene_fixture
