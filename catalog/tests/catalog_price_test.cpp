// The instance-hour prices `moetwin plan` costs options with: shipped values and strict reading.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "moetwin/catalog/catalog.hpp"
#include "moetwin/common/csv.hpp"
#include "moetwin/common/input_error.hpp"

namespace moetwin {
namespace {

const std::string kDir = std::string(MOETWIN_SOURCE_DIR) + "/catalog/data";

TEST(CatalogPrices, ShippedOnDemandPricesWithTheirSource) {
  const Catalog c = Catalog::load(kDir);
  EXPECT_DOUBLE_EQ(c.instance("p5.48xlarge").price_usd_per_hour, 55.04);
  EXPECT_DOUBLE_EQ(c.instance("p5en.48xlarge").price_usd_per_hour, 63.296);
  EXPECT_DOUBLE_EQ(c.instance("p6-b200.48xlarge").price_usd_per_hour, 113.9328);
  EXPECT_DOUBLE_EQ(c.instance("p6-b300.48xlarge").price_usd_per_hour, 0);  // unknown: plan needs --price
  for (const auto& [name, i] : c.instances()) {
    EXPECT_FALSE(i.price_source.empty()) << name;
    if (i.price_usd_per_hour > 0) {
      EXPECT_NE(i.price_source.find("(read 2025-06)"), std::string::npos) << name;
    }
  }
}

// A copy of the shipped catalog with instances.toml edited by `edit`; returns the load error ("" if none).
std::string load_error(const std::string& from, const std::string& to) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "moetwin_catalog_price_test";
  fs::create_directories(dir);
  for (const char* f : {"gpus.toml", "models.toml", "dispatchers.toml", "stacks.toml"}) {
    fs::copy_file(fs::path(kDir) / f, dir / f, fs::copy_options::overwrite_existing);
  }
  std::string text = read_text_file(kDir + "/instances.toml");
  const std::size_t at = text.find(from);
  if (at == std::string::npos) return "fixture text not found: " + from;
  text.replace(at, from.size(), to);
  std::ofstream(dir / "instances.toml") << text;
  try {
    Catalog::load(dir.string());
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(CatalogPrices, StrictReading) {
  EXPECT_NE(load_error("price_usd_per_hour = 55.04", "price_usd_per_hour = -1")
                .find("[p5.48xlarge].price_usd_per_hour: -1"),
            std::string::npos);
  EXPECT_NE(load_error("price_usd_per_hour = 55.04", "price_usd_per_hour = \"55\"")
                .find("[p5.48xlarge].price_usd_per_hour"),
            std::string::npos);
  const std::string missing = load_error(
      "price_source = \"AWS EC2 on-demand pricing page, us-east-1, after the June 2025 P5 price reduction "
      "(read "
      "2025-06)\"\n",
      "");
  EXPECT_NE(missing.find("[p5.48xlarge].price_source"), std::string::npos) << missing;
  EXPECT_EQ(load_error("price_usd_per_hour = 55.04", "price_usd_per_hour = 60"), "");
}

}  // namespace
}  // namespace moetwin
