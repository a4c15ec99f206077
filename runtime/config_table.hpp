// config_table: the machinery behind runtime/config.cpp's key tables, where each config key is
// named once. A config object (the top level, `session`, `session.maintenance`, one item of
// `bindings[]`, ...) is a table of rows; a row says, for one key: its JSON name, how its value
// is read into the settings (a kind from config_values.hpp, or a function of its own), how it
// is written back for `config show`, its default (never written here: the settings struct's
// default member initializer, shown through the row's writer) and one line of documentation.
// - read_keys: an object's members in file order, each by its row; a null value keeps the
//   default; an unknown key is a warning with the closest name of the same table (key_walk);
// - write_object: the rows in table order, each that has something to show;
// - check_required: the rows marked required, and those of nested plain objects;
// - describe: the rows as documentation lines (`sessionrt config keys`, docs/config.md).
// Errors are config_values.hpp's "config key <path>: ..." (errc::invalid_argument). Tables are
// built once (function-local statics) and read concurrently afterwards; rows hold no state.
#pragma once
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "messages/json_writer.hpp"
#include "messages/status.hpp"
#include "runtime/config_values.hpp"

namespace sessionrt::runtime::config_table {

namespace bj = boost::json;

// ---- values as `config show` writes them ------------------------------------------------------

// A whole number as an int64 (a fraction stays a double), as JavaScript would print it.
bj::value number_json(double number);
bj::value size_json(std::uint64_t number);  // clamped to INT64_MAX
bj::array strings_json(const std::vector<std::string>& texts);
// A duration as the largest whole unit: "30d", "24h", "90m", "45s", "1500ms".
std::string duration_text(std::int64_t ms);

template <class Field, class Value>
status assign(Field& field, result<Value> read) {
  if (!read.ok()) return std::move(read).take_error();
  field = std::move(*read);
  return {};
}

// "config key <parent.key>: is required (<what>)".
status missing_key(const std::string& parent, std::string_view key, std::string_view what);

// ---- one load's walk: unknown keys ------------------------------------------------------------

// The warnings of one load, and the unknown keys that had no near miss: more than
// kUnusedKeysListed of them (an OpenClaw config's channels, plugins, ...) become one line.
struct key_walk {
  std::vector<std::string>& warnings;
  std::vector<std::string> unused_keys;
  std::vector<std::size_t> unused_lines;  // where their lines are in `warnings`

  // "unknown config key <path> (did you mean <path>?)" when a known name is close (always its
  // own line), else the plain line, remembered for fold_unused.
  void warn_unknown(const std::string& parent, std::string_view key, std::span<const std::string_view> known);
  // "<n> config keys sessionrt does not use are ignored: <first five>, ..." in place of their lines.
  void fold_unused();
};
inline constexpr std::size_t kUnusedKeysListed = 3;

// ---- documentation ------------------------------------------------------------------------------

struct doc_line {
  std::string key, type, default_value, meaning;
};
// A nested object documented once under its name ("reset block") wherever a key holds one.
struct doc_shape {
  std::string name, note;
  std::vector<doc_line> lines;
};
struct docs {
  std::vector<doc_line> lines;
  std::vector<doc_shape> shapes;
  std::vector<std::pair<std::string, std::string>> type_notes;  // type -> what its values look like

  bool has_shape(std::string_view name) const;
  void note_type(const std::string& type, const std::string& note);
};
// The markdown page: `preface`, the key table, the shapes, the value types.
std::string render_markdown(const docs& d, std::string_view preface);

// ---- rows and tables ----------------------------------------------------------------------------

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class Target, class State>
struct object;

template <class Target, class State>
struct row {
  using reader = std::function<status(const bj::value&, const std::string& path, Target&, State&)>;
  using writer = std::function<std::optional<bj::value>(const Target&)>;  // nullopt: not shown
  using checker = std::function<status(const Target&, const std::string& parent)>;
  using describer = std::function<void(const std::string& key, std::vector<doc_line>&, docs&)>;

  std::string_view name;
  std::string type;          // docs: "bool", "ms >= 1", "reset block", ...
  std::string note;          // docs: what values of `type` look like ("" = nothing to say)
  std::string meaning;       // docs: one line
  std::string default_text;  // docs: set where the default is derived ("" = the writer's)
  std::string required_hint;
  reader read;
  writer write;     // `config show`
  writer value;     // the value whatever `write` omits (docs' default, required keys)
  checker check;    // required keys, here or in a nested plain object
  describer children;

  // The default in the docs, for a default that is derived from other keys.
  row default_doc(std::string text) && {
    default_text = std::move(text);
    return std::move(*this);
  }
  // An object item must have this key: "config key <parent>.<name>: is required (<hint>)".
  row required(std::string hint) && {
    required_hint = hint;
    check = [got = value, name = name, hint = std::move(hint)](const Target& t, const std::string& parent) -> status {
      auto v = got(t);
      if (!v || (v->is_string() && v->get_string().empty())) return missing_key(parent, name, hint);
      return {};
    };
    return std::move(*this);
  }
  // Reading it warns "config key <path> is deprecated: <instead>" (and still reads it).
  row deprecated(std::string instead) && {
    meaning += (meaning.empty() ? "deprecated: " : " (deprecated: ") + instead + (meaning.empty() ? "" : ")");
    read = [next = std::move(read), instead = std::move(instead)](const bj::value& v, const std::string& p, Target& t,
                                                                   State& st) {
      st.warnings.push_back("config key " + p + " is deprecated: " + instead);
      return next(v, p, t, st);
    };
    return std::move(*this);
  }
  // `config show` leaves it out while it has its default value.
  row omit_at_default() && {
    write = [got = value, initial = value(Target{})](const Target& t) -> std::optional<bj::value> {
      auto v = got(t);
      if (v == initial) return std::nullopt;
      return v;
    };
    return std::move(*this);
  }
  // `config show` leaves it out while it is an empty string, array or object.
  row omit_if_empty() && {
    write = [next = std::move(write)](const Target& t) -> std::optional<bj::value> {
      auto v = next(t);
      if (v && ((v->is_string() && v->get_string().empty()) || (v->is_array() && v->get_array().empty()) ||
                (v->is_object() && v->get_object().empty())))
        return std::nullopt;
      return v;
    };
    return std::move(*this);
  }
  // `config show` writes `shown` for an unset optional value instead of leaving it out.
  row unset_as(bj::value shown) && {
    write = [next = std::move(write), shown = std::move(shown)](const Target& t) -> std::optional<bj::value> {
      auto v = next(t);
      return v ? v : shown;
    };
    return std::move(*this);
  }
  row read_with(reader r) && {
    read = std::move(r);
    return std::move(*this);
  }
  row write_with(writer w) && {
    write = std::move(w);
    value = write;
    return std::move(*this);
  }
  row noted(std::string text) && {
    note = std::move(text);
    return std::move(*this);
  }
  row typed(std::string type_name, std::string text) && {
    type = std::move(type_name);
    note = std::move(text);
    return std::move(*this);
  }
  // Documents the items of an array (`<key>[].<name>`), the members of a map (`<key>.<id>.<name>`)
  // or (a named shape) what the key holds.
  template <class Item>
  row documents(const object<Item, State>& table, std::string infix = "[]") && {
    children = describer_of(table, std::move(infix));
    return std::move(*this);
  }

  template <class Sub>
  static describer describer_of(const object<Sub, State>& table, std::string infix);
};

// One config object: its rows in `config show` order. A named shape is documented once.
template <class Target, class State>
struct object {
  std::string shape;  // "" = documented in place
  std::string note;   // the shape's own note
  std::vector<row<Target, State>> rows;

  std::vector<std::string_view> names() const {
    std::vector<std::string_view> out;
    for (const auto& r : rows) out.push_back(r.name);
    return out;
  }
};

// ---- walking a table ----------------------------------------------------------------------------

// Reads every member of the object at `path` with its key's row, in file order. Unknown keys
// are warned about; null values keep the default.
template <class Target, class State>
status read_keys(const bj::value& value, const std::string& path, const object<Target, State>& table, Target& target,
                 State& state) {
  if (!value.is_object()) return config_key_error(path, "expected an object, got " + describe_json_value(value));
  for (const auto& member : value.get_object()) {
    const row<Target, State>* known = nullptr;
    for (const auto& r : table.rows)
      if (r.name == member.key()) known = &r;
    if (!known) {
      key_walk& walk = state;
      walk.warn_unknown(path, member.key(), table.names());
      continue;
    }
    if (member.value().is_null()) continue;
    SRT_RETURN_IF_ERROR(known->read(member.value(), child_key_path(path, member.key()), target, state));
  }
  return {};
}

template <class Target, class State>
bj::object write_object(const object<Target, State>& table, const Target& target) {
  bj::object out;
  for (const auto& r : table.rows)
    if (r.write)
      if (auto v = r.write(target)) out[r.name] = std::move(*v);
  return out;
}

template <class Target, class State>
status check_required(const object<Target, State>& table, const Target& target, const std::string& path) {
  for (const auto& r : table.rows)
    if (r.check) SRT_RETURN_IF_ERROR(r.check(target, path));
  return {};
}

template <class Target, class State>
void describe_rows(const object<Target, State>& table, const std::string& prefix, std::vector<doc_line>& lines,
                   docs& d) {
  const Target defaults{};
  for (const auto& r : table.rows) {
    std::string key = prefix.empty() ? std::string(r.name) : prefix + "." + std::string(r.name);
    std::string default_value = r.default_text;
    if (default_value.empty() && r.value) {
      auto v = r.value(defaults);
      default_value = v ? "`" + json::to_compact(*v) + "`" : "unset";
    }
    lines.push_back({key, r.type + (r.required_hint.empty() ? "" : ", required"), default_value, r.meaning});
    d.note_type(r.type, r.note);
    if (r.children) r.children(key, lines, d);
  }
}

// A table as the whole documentation.
template <class Target, class State>
docs describe(const object<Target, State>& table) {
  docs d;
  describe_rows(table, "", d.lines, d);
  return d;
}

template <class Target, class State>
template <class Sub>
typename row<Target, State>::describer row<Target, State>::describer_of(const object<Sub, State>& table,
                                                                      std::string infix) {
  return [table = &table, infix = std::move(infix)](const std::string& key, std::vector<doc_line>& lines, docs& d) {
    if (table->shape.empty()) return describe_rows(*table, key + infix, lines, d);
    if (d.has_shape(table->shape)) return;
    doc_shape shape{table->shape, table->note, {}};
    describe_rows(*table, "", shape.lines, d);
    d.shapes.push_back(std::move(shape));
  };
}

// ---- kinds: how a scalar is read, written and named (config_values.hpp's readers) -------------

template <class Kind, class Field>
std::optional<bj::value> shown(const Kind& kind, const Field& field) {
  if constexpr (is_optional<Field>::value) {
    if (!field) return std::nullopt;
    return bj::value(kind.write(*field));
  } else {
    return bj::value(kind.write(field));
  }
}

template <class Number>
bj::value whole_json(Number n) {
  if constexpr (std::is_floating_point_v<Number>)
    return number_json(n);
  else if constexpr (std::is_unsigned_v<Number>)
    return size_json(n);
  else
    return static_cast<std::int64_t>(n);
}

struct boolean {
  std::string type() const { return "bool"; }
  std::string note() const { return {}; }
  template <class F>
  status read(const bj::value& v, const std::string& p, F& f) const {
    return assign(f, read_bool(v, p));
  }
  bool write(bool b) const { return b; }
};

// A string; `non_empty`: not empty after trimming white space.
struct text {
  bool non_empty = false;
  std::string type() const { return "string"; }
  std::string note() const { return {}; }
  template <class F>
  status read(const bj::value& v, const std::string& p, F& f) const {
    return assign(f, non_empty ? read_non_empty_string(v, p) : read_string(v, p));
  }
  bj::value write(const std::string& s) const { return bj::value(s); }
};

struct strings {
  std::string type() const { return "string[]"; }
  std::string note() const { return {}; }
  template <class F>
  status read(const bj::value& v, const std::string& p, F& f) const {
    return assign(f, read_string_list(v, p));
  }
  bj::value write(const std::vector<std::string>& s) const { return strings_json(s); }
};

struct whole {
  std::int64_t min = 0;
  std::int64_t max = max_config_integer;
  std::string type() const;
  std::string note() const;
  template <class F>
  status read(const bj::value& v, const std::string& p, F& f) const {
    return assign(f, read_whole_number(v, p, min, max));
  }
  template <class N>
  bj::value write(N n) const {
    return whole_json(n);
  }
};

struct number {
  double min = 0;
  std::string type() const;
  std::string note() const { return {}; }
  template <class F>
  status read(const bj::value& v, const std::string& p, F& f) const {
    return assign(f, read_number(v, p, min));
  }
  bj::value write(double n) const { return number_json(n); }
};

struct bytes {
  std::int64_t min = 0;
  std::string type() const;
  std::string note() const;
  template <class F>
  status read(const bj::value& v, const std::string& p, F& f) const {
    return assign(f, read_byte_size(v, p, min));
  }
  template <class N>
  bj::value write(N n) const {
    return whole_json(n);
  }
};

// Milliseconds; `infinity`: the value "Infinity" reads as (and is written back as).
struct millis {
  std::int64_t min = 0;
  std::optional<std::int64_t> infinity;
  std::optional<std::int64_t> shown_as_infinity;  // written as "Infinity" though not read so
  std::string type() const;
  std::string note() const;
  template <class F>
  status read(const bj::value& v, const std::string& p, F& f) const {
    return assign(f, read_duration_ms(v, p, min, infinity));
  }
  bj::value write(std::int64_t ms) const {
    if ((infinity && ms == *infinity) || (shown_as_infinity && ms == *shown_as_infinity)) return "Infinity";
    return ms;
  }
};

// One of `names`: parsed by the rule module's own parser (its trimming and case), or when there
// is none, exactly one of the names. Written as `name_of` says.
template <class Enum>
struct one_of {
  std::vector<std::string_view> names;
  std::optional<Enum> (*parse)(std::string_view) = nullptr;
  std::function<std::string(const Enum&)> name_of;

  std::string type() const {
    std::string out;
    for (auto n : names) out += (out.empty() ? "" : " / ") + std::string(n);
    return out;
  }
  std::string note() const { return {}; }
  std::string quoted() const {
    std::string out;
    for (auto n : names) out += (out.empty() ? "\"" : ", \"") + std::string(n) + "\"";
    return out;
  }
  template <class F>
  status read(const bj::value& v, const std::string& p, F& f) const {
    if (parse) return assign(f, read_enum<Enum>(v, p, parse, quoted()));
    if constexpr (std::is_constructible_v<Enum, std::string_view>) {
      if (v.is_string())
        for (auto n : names)
          if (v.get_string() == n) {
            f = Enum(n);
            return {};
          }
    }
    return config_key_error(p, "expected one of " + quoted() + ", got " + describe_json_value(v));
  }
  bj::value write(const Enum& e) const { return bj::value(name_of(e)); }
};

// ---- row factories --------------------------------------------------------------------------------

// Member pointers (or chains of them) and lambdas `[](auto& t) -> auto& {...}` select a field.
template <class Outer, class Inner, class Leaf>
auto at(Inner Outer::*first, Leaf Inner::*second) {
  return [first, second](auto& t) -> auto& { return (t.*first).*second; };
}
inline auto self() {
  return [](auto& t) -> auto& { return t; };
}

template <class Target, class State>
struct keys {
  using row_t = row<Target, State>;

  // A scalar field read and written by `kind`; an optional field is left out of `config show`
  // while unset (unless unset_as says otherwise).
  template <class Get, class Kind>
  static row_t field(std::string_view name, Get get, Kind kind, std::string meaning) {
    row_t r;
    r.name = name;
    r.type = kind.type();
    r.note = kind.note();
    r.meaning = std::move(meaning);
    r.read = [get, kind](const bj::value& v, const std::string& p, Target& t, State&) {
      return kind.read(v, p, std::invoke(get, t));
    };
    r.value = [get, kind](const Target& t) { return shown(kind, std::invoke(get, t)); };
    r.write = r.value;
    return r;
  }

  // A key with its own reader and writer (write may be null: read, never shown).
  static row_t custom(std::string_view name, std::string type, std::string meaning, typename row_t::reader read,
                      typename row_t::writer write) {
    row_t r;
    r.name = name;
    r.type = std::move(type);
    r.meaning = std::move(meaning);
    r.read = std::move(read);
    r.value = write;
    r.write = std::move(write);
    return r;
  }

  // A nested object, its own table. An optional field is read fresh (its required keys checked
  // at once) and left out while unset; a plain one is read over its defaults, its required keys
  // checked with its parent's (check_required).
  template <class Get, class Sub>
  static row_t nested(std::string_view name, Get get, const object<Sub, State>& table, std::string meaning = {}) {
    using field_t = std::remove_cvref_t<std::invoke_result_t<Get, Target&>>;
    row_t r;
    r.name = name;
    r.type = table.shape.empty() ? "object" : table.shape;  // a shape's note is in its own section
    r.meaning = std::move(meaning);
    const auto* sub = &table;
    if constexpr (is_optional<field_t>::value) {
      r.read = [get, sub](const bj::value& v, const std::string& p, Target& t, State& st) -> status {
        Sub fresh;
        SRT_RETURN_IF_ERROR(read_keys(v, p, *sub, fresh, st));
        SRT_RETURN_IF_ERROR(check_required(*sub, fresh, p));
        std::invoke(get, t) = std::move(fresh);
        return {};
      };
      r.write = [get, sub](const Target& t) -> std::optional<bj::value> {
        const auto& f = std::invoke(get, t);
        if (!f) return std::nullopt;
        return bj::value(write_object(*sub, *f));
      };
      r.value = r.write;
    } else {
      r.read = [get, sub](const bj::value& v, const std::string& p, Target& t, State& st) {
        return read_keys(v, p, *sub, std::invoke(get, t), st);
      };
      r.write = [get, sub](const Target& t) -> std::optional<bj::value> {
        return bj::value(write_object(*sub, std::invoke(get, t)));
      };
      r.check = [get, sub, name](const Target& t, const std::string& parent) {
        return check_required(*sub, std::invoke(get, t), child_key_path(parent, name));
      };
    }
    r.children = row_t::describer_of(table, "");
    return r;
  }

  // The rows of a part of Target (`get` selects it) as rows of Target: a config object whose
  // keys live in several structs lists them as groups.
  template <class Inner, class Get>
  static std::vector<row_t> lifted(Get get, std::vector<row<Inner, State>> inner) {
    std::vector<row_t> out;
    for (auto& in : inner) {
      row_t r;
      r.name = in.name;
      r.type = std::move(in.type);
      r.note = std::move(in.note);
      r.meaning = std::move(in.meaning);
      r.default_text = std::move(in.default_text);
      r.required_hint = std::move(in.required_hint);
      if (in.read)
        r.read = [get, f = std::move(in.read)](const bj::value& v, const std::string& p, Target& t, State& st) {
          return f(v, p, std::invoke(get, t), st);
        };
      if (in.write) r.write = [get, f = std::move(in.write)](const Target& t) { return f(std::invoke(get, t)); };
      if (in.value) r.value = [get, f = std::move(in.value)](const Target& t) { return f(std::invoke(get, t)); };
      if (in.check)
        r.check = [get, f = std::move(in.check)](const Target& t, const std::string& parent) {
          return f(std::invoke(get, t), parent);
        };
      r.children = std::move(in.children);
      out.push_back(std::move(r));
    }
    return out;
  }
};

// Rows in groups, in order (lifted groups and single rows).
template <class Row>
std::vector<Row> joined_rows(std::initializer_list<std::vector<Row>> groups) {
  std::vector<Row> out;
  for (const auto& g : groups) out.insert(out.end(), g.begin(), g.end());
  return out;
}

}  // namespace sessionrt::runtime::config_table
