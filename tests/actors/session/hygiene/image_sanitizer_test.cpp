// Images are really downscaled (the output is decoded and measured); corrupt ones become the
// placeholder; small ones are left byte for byte.
#include <catch2/catch.hpp>
#include <stb_image.h>

#include "actors/session/hygiene/hygiene_pipeline.hpp"
#include "actors/session/hygiene/image_sanitizer.hpp"
#include "actors/session/hygiene/replay_message.hpp"
#include "tests/actors/session/hygiene/hygiene_fixture.hpp"

using namespace sessionrt::actors::hygiene;
using namespace sessionrt::testing::hygiene_fixture;

namespace {

const transcript_policy kOther = resolve_transcript_policy("ollama", "", "llama3");

struct decoded {
  int w = 0, h = 0, comp = 0;
  bool png = false, jpeg = false;
};

decoded decode_block(const boost::json::value& block) {
  const auto& b = block.as_object();
  auto bytes = decode_base64(b.at("data").as_string());
  REQUIRE(bytes);
  decoded d;
  d.png = bytes->size() > 4 && (*bytes)[0] == 0x89 && (*bytes)[1] == 'P';
  d.jpeg = bytes->size() > 3 && (*bytes)[0] == 0xFF && (*bytes)[1] == 0xD8;
  unsigned char* px = stbi_load_from_memory(bytes->data(), static_cast<int>(bytes->size()), &d.w, &d.h, &d.comp, 0);
  REQUIRE(px != nullptr);  // a real image, fully decodable
  stbi_image_free(px);
  return d;
}

}  // namespace

TEST_CASE("images: a PNG over the limit is downscaled to it and stays PNG", "[hygiene][images]") {
  const auto big = png_base64(1600, 900, 4);
  auto ctx = context_of({user_blocks(text("look") + "," + image(big)), assistant(text("ok")), user("next")});
  hygiene_options opt;  // 1200 by default
  auto rep = sanitize_for_provider(ctx, kOther, opt);
  CHECK(rep.images_downscaled == 1);
  const auto& block = (*content_array(ctx[0]))[1];
  auto d = decode_block(block);
  CHECK(d.png);
  CHECK(d.w == 1200);
  CHECK(d.h == 675);
  CHECK(d.comp == 4);
  CHECK(block.as_object().at("mimeType") == "image/png");
}

TEST_CASE("images: a JPEG in a tool result is downscaled and stays JPEG, the limit is configurable", "[hygiene][images]") {
  const auto big = jpeg_base64(500, 1000);
  auto ctx = context_of({user("shot"), assistant(call("t1", "screenshot"), "toolUse"),
                         R"({"role":"toolResult","toolCallId":"t1","toolName":"screenshot","content":[)" +
                             image(big, "image/jpeg") + R"(],"isError":false})",
                         user("next")});
  hygiene_options opt;
  opt.image_max_dimension_px = 256;
  auto rep = sanitize_for_provider(ctx, kOther, opt);
  CHECK(rep.images_downscaled == 1);
  const auto& block = (*content_array(ctx[2]))[0];
  auto d = decode_block(block);
  CHECK(d.jpeg);
  CHECK(d.h == 256);
  CHECK(d.w == 128);
  CHECK(block.as_object().at("mimeType") == "image/jpeg");
}

TEST_CASE("images: an image within the limit is left byte for byte", "[hygiene][images]") {
  const auto small = png_base64(64, 32);
  auto ctx = context_of({user_blocks(image(small)), assistant(text("ok")), user("next")});
  auto rep = sanitize_for_provider(ctx, kOther);
  CHECK(rep.images_downscaled == 0);
  CHECK(rep.images_replaced == 0);
  CHECK((*content_array(ctx[0]))[0].as_object().at("data").as_string() == small);
}

TEST_CASE("images: corrupted base64 and undecodable images become the placeholder text", "[hygiene][images]") {
  const auto good = png_base64(16, 16);
  const std::string truncated_png = good.substr(0, 40);  // valid base64, PNG magic, no IDAT
  auto ctx = context_of({user_blocks(image("not base64 !!!") + "," + image("QUJDRA=x") + "," + image("éé") + "," +
                                     image(truncated_png) + "," + R"({"type":"image","mimeType":"image/png"})" + "," +
                                     image("UklGRgAAAABXRUJQ", "image/webp")),
                         assistant(text("ok")), user("next")});
  auto rep = sanitize_for_provider(ctx, kOther);
  CHECK(rep.images_replaced == 5);
  const auto& blocks = *content_array(ctx[0]);
  REQUIRE(blocks.size() == 6);
  for (std::size_t k = 0; k < 5; ++k) {
    CHECK(block_type(blocks[k]) == "text");
    CHECK(blocks[k].as_object().at("text").as_string() == kCorruptedImageText);
  }
  // A format stb does not know (WebP) with valid base64 passes unchanged.
  CHECK(block_type(blocks[5]) == "image");
}

TEST_CASE("images: a truncated PNG over the limit cannot be decoded and becomes the placeholder", "[hygiene][images]") {
  const auto big = png_base64(1400, 20);
  auto ctx = context_of({user_blocks(image(big.substr(0, big.size() / 8 * 4))), assistant(text("ok")), user("next")});
  auto rep = sanitize_for_provider(ctx, kOther);
  CHECK(rep.images_replaced == 1);
  CHECK(texts(ctx[0]) == std::string(kCorruptedImageText));
}

TEST_CASE("images: base64 round trip through OpenSSL", "[hygiene][images]") {
  const unsigned char bytes[] = {0, 1, 2, 250, 251, 252, 253};
  for (std::size_t n = 0; n <= sizeof bytes; ++n) {
    auto enc = encode_base64(bytes, n);
    if (n == 0) {
      CHECK_FALSE(decode_base64(enc));
      continue;
    }
    auto dec = decode_base64(enc);
    REQUIRE(dec);
    CHECK(std::vector<unsigned char>(bytes, bytes + n) == *dec);
    // Unpadded and whitespace-broken forms decode the same.
    std::string unpadded = enc;
    while (!unpadded.empty() && unpadded.back() == '=') unpadded.pop_back();
    CHECK(decode_base64(unpadded) == dec);
    CHECK(decode_base64(" " + enc.substr(0, 2) + "\n" + enc.substr(2)) == dec);
  }
  CHECK_FALSE(decode_base64("A"));
  CHECK_FALSE(decode_base64("AB=C"));
}
