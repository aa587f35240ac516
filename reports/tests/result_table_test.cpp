#include "moetwin/reports/result_table.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "moetwin/common/version.hpp"

namespace moetwin {
namespace {

ResultTable sample() {
  ResultTable t;
  t.columns = {"name", "value", "fits"};
  t.add_row({"alpha", Cell::fixed(3.14159, 2), Cell::boolean(true)});
  t.add_row({"b,c", Cell::integer(12345), Cell::boolean(false)});
  return t;
}

TEST(ResultTable, RejectsRaggedRowsAndFindsColumns) {
  ResultTable t = sample();
  EXPECT_THROW(t.add_row({"x"}), std::logic_error);
  EXPECT_EQ(t.column("fits"), 2u);
  EXPECT_THROW((void)t.column("nope"), std::logic_error);
}

TEST(ResultTable, TextAlignsColumnsAndRightAlignsNumbers) {
  EXPECT_EQ(render_text(sample()),
            "name   value  fits\n"
            "-----  -----  -----\n"
            "alpha   3.14  true\n"
            "b,c    12345  false\n");
  EXPECT_EQ(render_key_values({{"a", "1"}, {"long key", "2"}, {"section", ""}}),
            "a         1\nlong key  2\nsection\n");
}

TEST(ResultTable, CsvQuotes) {
  EXPECT_EQ(render_csv(sample()), "name,value,fits\nalpha,3.14,true\n\"b,c\",12345,false\n");
}

TEST(ResultTable, JsonHasContextAndTypedCells) {
  OutputContext ctx{"inspect", "/cat", {"in.csv"}};
  ResultTable t = sample();
  t.columns.push_back("x");
  t.rows[0].push_back(Cell::exact(0.1));
  t.rows[1].push_back(Cell::exact(1e300 * 1e300));  // inf stays a string: JSON has no infinity
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(render_json(ctx, t));
  EXPECT_EQ(j["context"]["schema_version"], kOutputSchemaVersion);
  EXPECT_EQ(j["context"]["moetwin_version"], kVersion);
  EXPECT_EQ(j["context"]["command"], "inspect");
  EXPECT_EQ(j["context"]["inputs"][0], "in.csv");
  EXPECT_EQ(j["rows"][0]["value"], 3.14);
  EXPECT_TRUE(j["rows"][0]["fits"].is_boolean());
  EXPECT_TRUE(j["rows"][1]["value"].is_number_integer());
  EXPECT_EQ(j["rows"][1]["value"], 12345);
  EXPECT_EQ(j["rows"][0]["x"], 0.1);
  EXPECT_TRUE(j["rows"][1]["x"].is_string());
  // Keys keep column order, and the output is byte-identical across calls.
  EXPECT_EQ(j["rows"][0].begin().key(), "name");
  EXPECT_EQ(render_json(ctx, t), render_json(ctx, t));
  const std::string two = render_json(ctx, {{"a", &t}, {"b", &t}});
  EXPECT_LT(two.find("\"a\""), two.find("\"b\""));
  EXPECT_EQ(two.back(), '\n');
}

}  // namespace
}  // namespace moetwin
