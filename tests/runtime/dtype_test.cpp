// dtype.{h,cpp}: names, sizes, NumPy's promotion table, Scalar conversions and storage.
// The promotion table and the cast results are numpy.promote_types and
// numpy.array([v], from).astype(to) from NumPy 2.4.6, pasted here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

#include "runtime/dtype.h"
#include "runtime/error.h"

namespace luda {
namespace {

const DType kAll[] = {DType::Bool,    DType::Int8,    DType::Int16,    DType::Int32,     DType::Int64,
                      DType::UInt8,   DType::UInt16,  DType::UInt32,   DType::UInt64,    DType::Float32,
                      DType::Float64, DType::Float16, DType::BFloat16, DType::Complex64, DType::Complex128};

TEST(DTypeNames, NamesSizesAndCTypes) {
  struct Row {
    const char* name;
    std::size_t size;
    const char* c_type;
    bool is_float, is_signed, is_unsigned;
  };
  const Row rows[] = {
      // ORDER DTYPE
      {"bool", 1, "bool", false, false, false},
      {"int8", 1, "signed char", false, true, false},
      {"int16", 2, "short", false, true, false},
      {"int32", 4, "int", false, true, false},
      {"int64", 8, "long long", false, true, false},
      {"uint8", 1, "unsigned char", false, false, true},
      {"uint16", 2, "unsigned short", false, false, true},
      {"uint32", 4, "unsigned int", false, false, true},
      {"uint64", 8, "unsigned long long", false, false, true},
      {"float32", 4, "float", true, false, false},
      {"float64", 8, "double", true, false, false},
      {"float16", 2, "luda_half", true, false, false},
      {"bfloat16", 2, "luda_bfloat16", true, false, false},
      {"complex64", 8, "luda_complex64", false, false, false},
      {"complex128", 16, "luda_complex128", false, false, false},
  };
  ASSERT_EQ(std::size(rows), static_cast<std::size_t>(kNumDTypes));
  for (int i = 0; i < kNumDTypes; ++i) {
    DType t = kAll[i];
    EXPECT_EQ(dtype_name(t), rows[i].name);
    EXPECT_EQ(itemsize(t), rows[i].size) << rows[i].name;
    EXPECT_STREQ(dtype_c_type(t), rows[i].c_type);
    EXPECT_EQ(is_float(t), rows[i].is_float) << rows[i].name;
    EXPECT_EQ(is_signed_integer(t), rows[i].is_signed) << rows[i].name;
    EXPECT_EQ(is_unsigned_integer(t), rows[i].is_unsigned) << rows[i].name;
    EXPECT_EQ(is_integer(t), rows[i].is_signed || rows[i].is_unsigned) << rows[i].name;
    EXPECT_EQ(parse_dtype(rows[i].name), t);
    EXPECT_EQ(dtype_from_name(rows[i].name), t);
  }
}

TEST(DTypeNames, UnknownNames) {
  EXPECT_EQ(dtype_names(), "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, "
                           "float16, bfloat16, complex64, complex128");
  EXPECT_EQ(parse_dtype("flaot32"), std::nullopt);
  EXPECT_EQ(parse_dtype("Float32"), std::nullopt);
  EXPECT_EQ(parse_dtype(""), std::nullopt);
  try {
    dtype_from_name("flaot32");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown dtype 'flaot32' (expected one of bool, int8, int16, int32, int64, uint8, "
                           "uint16, uint32, uint64, float32, float64, float16, bfloat16, complex64, complex128)");
  }
}

// clang-format off
const DType kPromoted[kNumDTypes][kNumDTypes] = {  // numpy.promote_types(row, column); bfloat16 as ml_dtypes
    {DType::Bool, DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::UInt8, DType::UInt16, DType::UInt32, DType::UInt64, DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Complex64, DType::Complex128},  // bool
    {DType::Int8, DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::Int16, DType::Int32, DType::Int64, DType::Float64, DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Complex64, DType::Complex128},  // int8
    {DType::Int16, DType::Int16, DType::Int16, DType::Int32, DType::Int64, DType::Int16, DType::Int32, DType::Int64, DType::Float64, DType::Float32, DType::Float64, DType::Float32, DType::Float32, DType::Complex64, DType::Complex128},  // int16
    {DType::Int32, DType::Int32, DType::Int32, DType::Int32, DType::Int64, DType::Int32, DType::Int32, DType::Int64, DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::Complex128, DType::Complex128},  // int32
    {DType::Int64, DType::Int64, DType::Int64, DType::Int64, DType::Int64, DType::Int64, DType::Int64, DType::Int64, DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::Complex128, DType::Complex128},  // int64
    {DType::UInt8, DType::Int16, DType::Int16, DType::Int32, DType::Int64, DType::UInt8, DType::UInt16, DType::UInt32, DType::UInt64, DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Complex64, DType::Complex128},  // uint8
    {DType::UInt16, DType::Int32, DType::Int32, DType::Int32, DType::Int64, DType::UInt16, DType::UInt16, DType::UInt32, DType::UInt64, DType::Float32, DType::Float64, DType::Float32, DType::Float32, DType::Complex64, DType::Complex128},  // uint16
    {DType::UInt32, DType::Int64, DType::Int64, DType::Int64, DType::Int64, DType::UInt32, DType::UInt32, DType::UInt32, DType::UInt64, DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::Complex128, DType::Complex128},  // uint32
    {DType::UInt64, DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::UInt64, DType::UInt64, DType::UInt64, DType::UInt64, DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::Complex128, DType::Complex128},  // uint64
    {DType::Float32, DType::Float32, DType::Float32, DType::Float64, DType::Float64, DType::Float32, DType::Float32, DType::Float64, DType::Float64, DType::Float32, DType::Float64, DType::Float32, DType::Float32, DType::Complex64, DType::Complex128},  // float32
    {DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::Float64, DType::Complex128, DType::Complex128},  // float64
    {DType::Float16, DType::Float16, DType::Float32, DType::Float64, DType::Float64, DType::Float16, DType::Float32, DType::Float64, DType::Float64, DType::Float32, DType::Float64, DType::Float16, DType::Float32, DType::Complex64, DType::Complex128},  // float16
    {DType::BFloat16, DType::BFloat16, DType::Float32, DType::Float64, DType::Float64, DType::BFloat16, DType::Float32, DType::Float64, DType::Float64, DType::Float32, DType::Float64, DType::Float32, DType::BFloat16, DType::Complex64, DType::Complex128},  // bfloat16
    {DType::Complex64, DType::Complex64, DType::Complex64, DType::Complex128, DType::Complex128, DType::Complex64, DType::Complex64, DType::Complex128, DType::Complex128, DType::Complex64, DType::Complex128, DType::Complex64, DType::Complex64, DType::Complex64, DType::Complex128},  // complex64
    {DType::Complex128, DType::Complex128, DType::Complex128, DType::Complex128, DType::Complex128, DType::Complex128, DType::Complex128, DType::Complex128, DType::Complex128, DType::Complex128, DType::Complex128, DType::Complex128, DType::Complex128, DType::Complex128, DType::Complex128},  // complex128
};
// clang-format on

TEST(DTypePromotion, MatchesNumpy) {
  for (int a = 0; a < kNumDTypes; ++a)
    for (int b = 0; b < kNumDTypes; ++b)
      EXPECT_EQ(promote_types(kAll[a], kAll[b]), kPromoted[a][b])
          << dtype_name(kAll[a]) << " with " << dtype_name(kAll[b]) << " gives "
          << dtype_name(promote_types(kAll[a], kAll[b])) << ", NumPy " << dtype_name(kPromoted[a][b]);
}

Scalar parse_value(const std::string& token, DType t) {
  if (t == DType::Bool) return Scalar::of_bool(token == "1");
  if (is_complex(t)) {  // "re,im"
    const auto comma = token.find(',');
    return Scalar::of_complex(std::strtod(token.substr(0, comma).c_str(), nullptr),
                              std::strtod(token.substr(comma + 1).c_str(), nullptr), t);
  }
  if (is_float(t)) return Scalar::of_float(std::strtod(token.c_str(), nullptr), t);
  if (is_unsigned_integer(t)) return Scalar::of_uint(std::strtoull(token.c_str(), nullptr, 10), t);
  return Scalar::of_int(std::strtoll(token.c_str(), nullptr, 10), t);
}

std::vector<Scalar> parse_values(const char* text, DType t) {
  std::vector<Scalar> out;
  std::istringstream in(text);
  for (std::string token; in >> token;) out.push_back(parse_value(token, t));
  return out;
}

struct CastCase {
  DType from, to;
  const char* values;    // in `from`
  const char* expected;  // NumPy's astype(to)
};

// clang-format off
const CastCase kCasts[] = {  // values where C defines the conversion
    {DType::Bool, DType::Bool, "1 1 0", "1 1 0"},
    {DType::Bool, DType::Int8, "1 0 1", "1 0 1"},
    {DType::Bool, DType::Int16, "1 0 1", "1 0 1"},
    {DType::Bool, DType::Int32, "0 0 0", "0 0 0"},
    {DType::Bool, DType::Int64, "1 0 0", "1 0 0"},
    {DType::Bool, DType::UInt8, "0 0 0", "0 0 0"},
    {DType::Bool, DType::UInt16, "0 1 0", "0 1 0"},
    {DType::Bool, DType::UInt32, "1 1 0", "1 1 0"},
    {DType::Bool, DType::UInt64, "0 0 0", "0 0 0"},
    {DType::Bool, DType::Float32, "1 0 1", "1.0 0.0 1.0"},
    {DType::Bool, DType::Float64, "1 1 0", "1.0 1.0 0.0"},
    {DType::Int8, DType::Bool, "-28 32 -2", "1 1 1"},
    {DType::Int8, DType::Int8, "42 45 41", "42 45 41"},
    {DType::Int8, DType::Int16, "-113 117 14", "-113 117 14"},
    {DType::Int8, DType::Int32, "103 -59 -36", "103 -59 -36"},
    {DType::Int8, DType::Int64, "97 -81 -112", "97 -81 -112"},
    {DType::Int8, DType::UInt8, "-33 45 -97", "223 45 159"},
    {DType::Int8, DType::UInt16, "94 -41 -70", "94 65495 65466"},
    {DType::Int8, DType::UInt32, "11 101 98", "11 101 98"},
    {DType::Int8, DType::UInt64, "95 -50 -124", "95 18446744073709551566 18446744073709551492"},
    {DType::Int8, DType::Float32, "71 53 69", "71.0 53.0 69.0"},
    {DType::Int8, DType::Float64, "-128 -119 0", "-128.0 -119.0 0.0"},
    {DType::Int16, DType::Bool, "-10804 -4151 28265", "1 1 1"},
    {DType::Int16, DType::Int8, "-19448 1833 -11473", "8 41 47"},
    {DType::Int16, DType::Int16, "-13438 20068 -22727", "-13438 20068 -22727"},
    {DType::Int16, DType::Int32, "-12029 -24984 -23001", "-12029 -24984 -23001"},
    {DType::Int16, DType::Int64, "-14352 13009 5213", "-14352 13009 5213"},
    {DType::Int16, DType::UInt8, "-3373 -21657 19591", "211 103 135"},
    {DType::Int16, DType::UInt16, "19646 -17334 -28856", "19646 48202 36680"},
    {DType::Int16, DType::UInt32, "-11811 -23200 19652", "4294955485 4294944096 19652"},
    {DType::Int16, DType::UInt64, "1281 463 -13726", "1281 463 18446744073709537890"},
    {DType::Int16, DType::Float32, "418 30635 -17289", "418.0 30635.0 -17289.0"},
    {DType::Int16, DType::Float64, "17567 -31816 -12203", "17567.0 -31816.0 -12203.0"},
    {DType::Int32, DType::Bool, "1860682483 1594563180 -1778864683", "1 1 1"},
    {DType::Int32, DType::Int8, "1473344387 1481449331 -200663524", "-125 115 28"},
    {DType::Int32, DType::Int16, "-567447906 2063223206 1937128953", "28318 18854 15865"},
    {DType::Int32, DType::Int32, "761150359 -431965213 -1244626023", "761150359 -431965213 -1244626023"},
    {DType::Int32, DType::Int64, "1874504382 -993044228 241204399", "1874504382 -993044228 241204399"},
    {DType::Int32, DType::UInt8, "750097423 -1116110267 -793882900", "15 69 236"},
    {DType::Int32, DType::UInt16, "1036898177 -1299610483 748998122", "53121 33933 52714"},
    {DType::Int32, DType::UInt32, "1909474467 791155362 627882060", "1909474467 791155362 627882060"},
    {DType::Int32, DType::UInt64, "-155373191 2009591580 -1194479544", "18446744073554178425 2009591580 18446744072515072072"},
    {DType::Int32, DType::Float32, "-619146997 605333298 664705670", "-619147008.0 605333312.0 664705664.0"},
    {DType::Int32, DType::Float64, "-1687537765 -1450519272 825588383", "-1687537765.0 -1450519272.0 825588383.0"},
    {DType::Int64, DType::Bool, "2497445648542471895 -2277941836792597089 5506783760112725637", "1 1 1"},
    {DType::Int64, DType::Int8, "-5644233737173151470 -2020676382729585325 5495910147717479952", "18 83 16"},
    {DType::Int64, DType::Int16, "-2204840248247600931 3933913241209696082 2075587137173279283", "-18211 28498 21043"},
    {DType::Int64, DType::Int32, "8135032126556598756 9069834565319873883 4126098624909127565", "734786020 -1384950437 -1645236339"},
    {DType::Int64, DType::Int64, "5697162704012182723 -6403510077064861300 3927132189350317417", "5697162704012182723 -6403510077064861300 3927132189350317417"},
    {DType::Int64, DType::UInt8, "6412537976337280884 -1822063347852018498 982289855986299877", "116 190 229"},
    {DType::Int64, DType::UInt16, "-378384193643775106 8458256429208583210 -3370628917010903085", "31614 15402 53203"},
    {DType::Int64, DType::UInt32, "-1806221672435233415 -9206404922524849878 -1472335461639865005", "1826803065 645900586 3401497939"},
    {DType::Int64, DType::UInt64, "2424568211867281722 8023615986481815283 7815453529049244001", "2424568211867281722 8023615986481815283 7815453529049244001"},
    {DType::Int64, DType::Float32, "-3184833807888544319 9017894227205216703 -5761380445299869947", "-3.18483383614387e+18 9.017894204344369e+18 -5.761380456406712e+18"},
    {DType::Int64, DType::Float64, "5962947248020819214 -6322446525452572105 -1750620862920457291", "5.962947248020819e+18 -6.322446525452572e+18 -1.7506208629204572e+18"},
    {DType::UInt8, DType::Bool, "87 18 48", "1 1 1"},
    {DType::UInt8, DType::Int8, "219 213 212", "-37 -43 -44"},
    {DType::UInt8, DType::Int16, "146 35 82", "146 35 82"},
    {DType::UInt8, DType::Int32, "134 254 66", "134 254 66"},
    {DType::UInt8, DType::Int64, "140 125 128", "140 125 128"},
    {DType::UInt8, DType::UInt8, "141 180 27", "141 180 27"},
    {DType::UInt8, DType::UInt16, "251 221 196", "251 221 196"},
    {DType::UInt8, DType::UInt32, "71 112 114", "71 112 114"},
    {DType::UInt8, DType::UInt64, "79 14 190", "79 14 190"},
    {DType::UInt8, DType::Float32, "0 195 49", "0.0 195.0 49.0"},
    {DType::UInt8, DType::Float64, "164 87 60", "164.0 87.0 60.0"},
    {DType::UInt16, DType::Bool, "60824 31100 58309", "1 1 1"},
    {DType::UInt16, DType::Int8, "12448 31490 22746", "-96 2 -38"},
    {DType::UInt16, DType::Int16, "29803 780 43712", "29803 780 -21824"},
    {DType::UInt16, DType::Int32, "22593 56279 13961", "22593 56279 13961"},
    {DType::UInt16, DType::Int64, "22105 2998 52012", "22105 2998 52012"},
    {DType::UInt16, DType::UInt8, "34997 26148 60098", "181 36 194"},
    {DType::UInt16, DType::UInt16, "38931 63164 48330", "38931 63164 48330"},
    {DType::UInt16, DType::UInt32, "38374 32856 13235", "38374 32856 13235"},
    {DType::UInt16, DType::UInt64, "45270 51833 45699", "45270 51833 45699"},
    {DType::UInt16, DType::Float32, "27039 374 48137", "27039.0 374.0 48137.0"},
    {DType::UInt16, DType::Float64, "2560 52682 9767", "2560.0 52682.0 9767.0"},
    {DType::UInt32, DType::Bool, "1316494930 917555915 2321447448", "1 1 1"},
    {DType::UInt32, DType::Int8, "872800091 1110391381 210305572", "91 85 36"},
    {DType::UInt32, DType::Int16, "4213817061 932915868 822513691", "-16667 10908 -28645"},
    {DType::UInt32, DType::Int32, "2581049298 606825077 3805663840", "-1713917998 606825077 -489303456"},
    {DType::UInt32, DType::Int64, "3359883815 1501107423 1719569202", "3359883815 1501107423 1719569202"},
    {DType::UInt32, DType::UInt8, "1573696628 3157413685 1789892114", "116 53 18"},
    {DType::UInt32, DType::UInt16, "1226035876 2922045708 590617812", "53924 57612 7380"},
    {DType::UInt32, DType::UInt32, "3372725943 1832163575 4041384190", "3372725943 1832163575 4041384190"},
    {DType::UInt32, DType::UInt64, "1121866414 1613619391 3744852948", "1121866414 1613619391 3744852948"},
    {DType::UInt32, DType::Float32, "3035572093 173507822 1467306900", "3035571968.0 173507824.0 1467306880.0"},
    {DType::UInt32, DType::Float64, "69524651 3539060777 1789123926", "69524651.0 3539060777.0 1789123926.0"},
    {DType::UInt64, DType::Bool, "16067367027026711151 9317547334228853789 13380235717586986454", "1 1 1"},
    {DType::UInt64, DType::Int8, "9868879224273291643 5831409626507570479 9118260630400314515", "123 47 -109"},
    {DType::UInt64, DType::Int16, "930645869162293689 793072841867755800 9776097850602953032", "27065 -32488 6472"},
    {DType::UInt64, DType::Int32, "8802315435485726471 15368671034354539880 371196782726055526", "2098235143 143236456 -668498330"},
    {DType::UInt64, DType::Int64, "10272693134744323294 9050657096982384147 11031100153207869260", "-8174050938965228322 9050657096982384147 -7415643920501682356"},
    {DType::UInt64, DType::UInt8, "13458350160933274472 9679755715676952078 10386221954630873452", "104 14 108"},
    {DType::UInt64, DType::UInt16, "9071811366713376019 11348566061257008552 4577139233802368699", "15635 9640 14011"},
    {DType::UInt64, DType::UInt32, "10193918498515431631 12403347557768678890 3525408558527733402", "1565241551 1451412970 3542802074"},
    {DType::UInt64, DType::UInt64, "18269048074189815412 13769746976586825188 17622751384307011363", "18269048074189815412 13769746976586825188 17622751384307011363"},
    {DType::UInt64, DType::Float32, "5422353480705359169 8180999593058000460 4822690105456516449", "5.422353742563377e+18 8.180999829351039e+18 4.822689996378997e+18"},
    {DType::UInt64, DType::Float64, "861308279153980175 307633367535869190 4551694276614208178", "8.613082791539802e+17 3.076333675358692e+17 4.551694276614208e+18"},
    {DType::Float32, DType::Bool, "21.599803924560547 -524.826416015625 26925532.0", "1 1 1"},
    {DType::Float32, DType::Int8, "0.48324623703956604 -0.008723830804228783 -13.369729042053223", "0 0 -13"},
    {DType::Float32, DType::Int16, "-0.054013121873140335 1.5099831216502935e-05 0.011888306587934494", "0 0 0"},
    {DType::Float32, DType::Int32, "6.666833400726318 0.00795299094170332 176.9450225830078", "6 0 176"},
    {DType::Float32, DType::Int64, "855522.0 33194635264.0 -140677280.0", "855522 33194635264 -140677280"},
    {DType::Float32, DType::UInt8, "-0.09509306401014328 0.5563384890556335 -0.019284317269921303", "0 0 0"},
    {DType::Float32, DType::UInt16, "0.011693972162902355 94.92718505859375 -0.6653426885604858", "0 94 0"},
    {DType::Float32, DType::UInt32, "132515592.0 638.9456176757812 -0.015068159438669682", "132515592 638 0"},
    {DType::Float32, DType::UInt64, "-0.007108435500413179 0.06512365490198135 28390.51171875", "0 0 28390"},
    {DType::Float32, DType::Float32, "294.4477233886719 92842160.0 133209.3125", "294.4477233886719 92842160.0 133209.3125"},
    {DType::Float32, DType::Float64, "-33.5608024597168 -54.26894760131836 -3102922.75", "-33.5608024597168 -54.26894760131836 -3102922.75"},
    {DType::Float64, DType::Bool, "54943.878027988925 -8012.460099660717 -177.0384050846499", "1 1 1"},
    {DType::Float64, DType::Int8, "-3.519880388050872 -1.667313405653497 92.91598860047003", "-3 -1 92"},
    {DType::Float64, DType::Int16, "-14.906401618579903 -289.2284645923461 0.06978787257481246", "-14 -289 0"},
    {DType::Float64, DType::Int32, "-9.72475605328421 -0.6958646238070096 -903658054.7128793", "-9 0 -903658054"},
    {DType::Float64, DType::Int64, "158.75269513992677 7457794.743624686 -1.510186675915287", "158 7457794 -1"},
    {DType::Float64, DType::UInt8, "11.948303685299159 -0.006400399491357171 0.05227916833432324", "11 0 0"},
    {DType::Float64, DType::UInt16, "5356.296362853685 775.770872272132 113.68634972033142", "5356 775 113"},
    {DType::Float64, DType::UInt32, "13166.478203373606 -0.13804460312528913 -0.002673877057870027", "13166 0 0"},
    {DType::Float64, DType::UInt64, "210896256.56145173 386971982.3711992 35786967764.80312", "210896256 386971982 35786967764"},
    {DType::Float64, DType::Float32, "-6.631035145259176 0.004348641034709542 -1970.4277847659398", "-6.631035327911377 0.004348641261458397 -1970.427734375"},
    {DType::Float64, DType::Float64, "-2491.9952503112045 -27001.03979886236 3295586563.5075607", "-2491.9952503112045 -27001.03979886236 3295586563.5075607"},
#include "casts_numpy.inc"  // float16, bfloat16 and the complexes, with NaN and infinities
};
// clang-format on

// Equal, NaN matching NaN part by part.
bool same(const Scalar& a, const Scalar& b) {
  auto eq = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
  if (a.dtype != b.dtype) return false;
  if (is_inexact(a.dtype)) return eq(a.v.f, b.v.f) && eq(a.im, b.im) && std::signbit(a.v.f) == std::signbit(b.v.f);
  return a == b;
}

TEST(ScalarCast, MatchesNumpyAstype) {
  for (const CastCase& c : kCasts) {
    std::vector<Scalar> in = parse_values(c.values, c.from), want = parse_values(c.expected, c.to);
    ASSERT_EQ(in.size(), want.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
      Scalar got = in[i].cast(c.to);
      EXPECT_EQ(got.dtype, c.to);
      EXPECT_TRUE(same(got, want[i])) << dtype_name(c.from) << " " << in[i].to_double() << " -> " << dtype_name(c.to)
                                      << ": got " << got.to_double() << ", NumPy " << want[i].to_double();
    }
  }
}

// Where C leaves float -> int undefined, luda pins saturation, NaN giving the minimum.
TEST(ScalarCast, FloatToIntegerOutOfRangeSaturates) {
  EXPECT_EQ(Scalar::of_float(1e10).cast(DType::Int32), Scalar::of_int(INT32_MAX, DType::Int32));
  EXPECT_EQ(Scalar::of_float(-1e10).cast(DType::Int32), Scalar::of_int(INT32_MIN, DType::Int32));
  EXPECT_EQ(Scalar::of_float(NAN).cast(DType::Int64), Scalar::of_int(INT64_MIN));
  EXPECT_EQ(Scalar::of_float(INFINITY).cast(DType::UInt8), Scalar::of_uint(255, DType::UInt8));
  EXPECT_EQ(Scalar::of_float(-2.5).cast(DType::UInt16), Scalar::of_uint(0, DType::UInt16));
  EXPECT_EQ(Scalar::of_float(1e30, DType::Float32).cast(DType::UInt64), Scalar::of_uint(UINT64_MAX, DType::UInt64));
  EXPECT_EQ(Scalar::of_float(-2.9).to_int64(), -2);
  EXPECT_EQ(Scalar::of_float(NAN).cast(DType::Bool), Scalar::of_bool(true));
  EXPECT_EQ(Scalar::of_float(-0.0).cast(DType::Bool), Scalar::of_bool(false));
}

TEST(ScalarCast, NarrowingWrapsAndFloat32Rounds) {
  EXPECT_EQ(Scalar::of_int(300, DType::UInt8), Scalar::of_uint(44, DType::UInt8));
  EXPECT_EQ(Scalar::of_int(-1, DType::UInt32), Scalar::of_uint(4294967295u, DType::UInt32));
  EXPECT_EQ(Scalar::of_uint(UINT64_MAX, DType::Int64), Scalar::of_int(-1));
  EXPECT_EQ(Scalar::of_int(16777217).cast(DType::Float32).v.f, 16777216.0);
  EXPECT_EQ(Scalar::of_float(0.1, DType::Float32).v.f, static_cast<double>(0.1f));
  EXPECT_EQ(Scalar::of_float(1e300, DType::Float32).v.f, INFINITY);
}

std::mt19937_64& rng() {
  static std::mt19937_64 g(99);
  return g;
}

Scalar random_scalar(DType t) {
  std::uint64_t r = rng()();
  if (t == DType::Bool) return Scalar::of_bool(r & 1);
  if (is_unsigned_integer(t)) return Scalar::of_uint(r).cast(t);
  if (is_signed_integer(t)) return Scalar::of_int(static_cast<std::int64_t>(r)).cast(t);
  std::normal_distribution<double> normal;
  const double scale = std::pow(10.0, static_cast<int>(r % 21) - 10);
  if (is_complex(t)) return Scalar::of_complex(normal(rng()) * scale, normal(rng()) * scale, t);
  return Scalar::of_float(normal(rng()) * scale, t);
}

TEST(ScalarStorage, StoreLoadRoundTripsEveryDType) {
  for (DType t : kAll)
    for (int i = 0; i < 200; ++i) {
      Scalar s = random_scalar(t);
      unsigned char bytes[24];
      std::memset(bytes, 0xAB, sizeof bytes);
      s.store(bytes);
      for (std::size_t k = itemsize(t); k < sizeof bytes; ++k) ASSERT_EQ(bytes[k], 0xAB);  // no overrun
      EXPECT_TRUE(same(Scalar::load(bytes, t), s)) << dtype_name(t);
    }
  // The stored layout is the C type's.
  unsigned char b[8];
  Scalar::of_int(-2, DType::Int16).store(b);
  std::int16_t i16;
  std::memcpy(&i16, b, 2);
  EXPECT_EQ(i16, -2);
  Scalar::of_float(1.5, DType::Float32).store(b);
  float f;
  std::memcpy(&f, b, 4);
  EXPECT_EQ(f, 1.5f);
  Scalar::of_bool(true).store(b);
  EXPECT_EQ(b[0], 1);
  Scalar::of_float(1.5, DType::Float16).store(b);  // IEEE binary16: 0 01111 1000000000
  std::uint16_t h;
  std::memcpy(&h, b, 2);
  EXPECT_EQ(h, 0x3e00);
  Scalar::of_float(1.5, DType::BFloat16).store(b);  // the top half of float32's bits
  std::memcpy(&h, b, 2);
  EXPECT_EQ(h, 0x3fc0);
  Scalar::of_complex(1.5, -2, DType::Complex64).store(b);  // re, then im, as std::complex
  float parts[2];
  std::memcpy(parts, b, 8);
  EXPECT_EQ(parts[0], 1.5f);
  EXPECT_EQ(parts[1], -2.0f);
}

// Every float16 and bfloat16 bit pattern: widening to float32 and rounding back gives the
// same bits (NaNs stay NaNs of their sign), and float64 rounds as float32 does on values
// that float32 holds exactly.
TEST(HalfConversion, EveryPatternRoundTrips) {
  for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const Float16 h{static_cast<std::uint16_t>(bits)};
    const float f = h.value();
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(Float16::from(f).value()));
      EXPECT_EQ(Float16::from(f).bits & 0x8000, bits & 0x8000);
    } else {
      EXPECT_EQ(Float16::from(f).bits, bits);
      EXPECT_EQ(Float16::from(static_cast<double>(f)).bits, bits);
    }
    const BFloat16 b{static_cast<std::uint16_t>(bits)};
    if (!std::isnan(b.value())) {
      EXPECT_EQ(BFloat16::from(b.value()).bits, bits);
      EXPECT_EQ(BFloat16::from(static_cast<double>(b.value())).bits, bits);
    }
  }
  // Ties to even, overflow to infinity, underflow to zero, the least subnormal.
  EXPECT_EQ(Float16::from(2049.0f).bits, Float16::from(2048.0f).bits);
  EXPECT_EQ(Float16::from(2051.0f).bits, Float16::from(2052.0f).bits);
  EXPECT_EQ(Float16::from(65519.0).value(), 65504.0f);
  EXPECT_TRUE(std::isinf(Float16::from(65520.0f).value()));
  EXPECT_EQ(Float16::from(std::ldexp(1.0, -25)).bits, 0);
  EXPECT_EQ(Float16::from(std::nextafter(std::ldexp(1.0, -25), 1.0)).bits, 1);
  EXPECT_EQ(Float16::from(-std::ldexp(1.0, -24)).bits, 0x8001);
  // float64 rounds once: 1 + 2^-11 + 2^-40 is above the tie that float32 would make of it.
  EXPECT_EQ(Float16::from(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)).bits, 0x3c01);
  EXPECT_EQ(Float16::from(static_cast<float>(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40))).bits, 0x3c00);
  EXPECT_EQ(BFloat16::from(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)).bits, 0x3f81);
}

// Widening and back is the identity; the value survives.
TEST(ScalarCast, WideningRoundTrips) {
  const std::pair<DType, DType> pairs[] = {
      {DType::Int8, DType::Int64},           {DType::Int16, DType::Int32},       {DType::UInt8, DType::Int16},
      {DType::UInt32, DType::Int64},         {DType::UInt16, DType::UInt64},     {DType::Int32, DType::Float64},
      {DType::Float32, DType::Float64},      {DType::Bool, DType::UInt8},        {DType::Int16, DType::Float32},
      {DType::Float16, DType::Float32},      {DType::BFloat16, DType::Float64},  {DType::Float16, DType::Complex64},
      {DType::Complex64, DType::Complex128}, {DType::Float32, DType::Complex64}, {DType::Int8, DType::Float16},
  };
  for (auto [narrow, wide] : pairs)
    for (int i = 0; i < 200; ++i) {
      Scalar s = random_scalar(narrow);
      Scalar w = s.cast(wide);
      EXPECT_EQ(w.to_double(), s.to_double()) << dtype_name(narrow) << " -> " << dtype_name(wide);
      EXPECT_EQ(w.im, s.im) << dtype_name(narrow) << " -> " << dtype_name(wide);
      EXPECT_EQ(w.cast(narrow), s) << dtype_name(narrow) << " -> " << dtype_name(wide);
    }
}

TEST(ScalarValues, AccessorsAndEquality) {
  EXPECT_EQ(Scalar::of_int(-7, DType::Int8).to_int64(), -7);
  EXPECT_EQ(Scalar::of_uint(UINT64_MAX).to_double(), 18446744073709551616.0);
  EXPECT_EQ(Scalar::of_bool(true).to_int64(), 1);
  EXPECT_TRUE(Scalar::of_int(3).is_integral_value());
  EXPECT_TRUE(Scalar::of_bool(false).is_integral_value());
  EXPECT_FALSE(Scalar::of_float(3, DType::Float32).is_integral_value());
  EXPECT_FALSE(Scalar::of_int(1, DType::Int32) == Scalar::of_int(1, DType::Int64));  // dtypes differ
  EXPECT_FALSE(Scalar::of_float(NAN) == Scalar::of_float(NAN));
  EXPECT_TRUE(Scalar::of_float(0.0) == Scalar::of_float(-0.0));
}

TEST(IntegerFits, RangeOfEveryDType) {
  struct Row {
    DType t;
    std::int64_t lo, hi;  // inclusive
  };
  const Row rows[] = {
      {DType::Bool, 0, 1},
      {DType::Int8, -128, 127},
      {DType::Int16, -32768, 32767},
      {DType::Int32, INT32_MIN, INT32_MAX},
      {DType::UInt8, 0, 255},
      {DType::UInt16, 0, 65535},
      {DType::UInt32, 0, UINT32_MAX},
  };
  for (const Row& r : rows) {
    EXPECT_TRUE(integer_fits(r.lo, r.t)) << dtype_name(r.t);
    EXPECT_TRUE(integer_fits(r.hi, r.t)) << dtype_name(r.t);
    EXPECT_FALSE(integer_fits(r.lo - 1, r.t)) << dtype_name(r.t);
    EXPECT_FALSE(integer_fits(r.hi + 1, r.t)) << dtype_name(r.t);
  }
  EXPECT_TRUE(integer_fits(INT64_MIN, DType::Int64));
  EXPECT_TRUE(integer_fits(INT64_MAX, DType::Int64));
  EXPECT_TRUE(integer_fits(INT64_MAX, DType::UInt64));
  EXPECT_FALSE(integer_fits(-1, DType::UInt64));
  EXPECT_TRUE(integer_fits(INT64_MIN, DType::Float32));
  EXPECT_TRUE(integer_fits(INT64_MAX, DType::Float64));
}

}  // namespace
}  // namespace luda
