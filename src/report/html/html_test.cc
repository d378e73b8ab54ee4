#include "report/html/html.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "core/testing/temp_dir.h"
#include "report/report_test_util.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing_util::kOddName;
using testing_util::MakeSampleReport;
using testing_util::RunCommand;
using testing_util::ShellQuote;

size_t Count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Html, VerdictComesFirstAndTextIsEscaped) {
  const std::string html = CheckReportToHtml(MakeSampleReport());
  const size_t verdict = html.find("id=\"verdict\"");
  const size_t failed = html.find("id=\"failed\"");
  const size_t samples = html.find("id=\"samples\"");
  ASSERT_NE(verdict, std::string::npos);
  EXPECT_LT(verdict, failed);
  EXPECT_LT(failed, samples);
  EXPECT_NE(html.find("data-verdict=\"FAIL\""), std::string::npos);
  // The odd name never appears raw: exactly the page's own script elements
  // (error handler, data, uPlot, report script) open and close.
  EXPECT_EQ(html.find(kOddName), std::string::npos);
  EXPECT_EQ(Count(html, "<script"), 4u);
  EXPECT_EQ(Count(html, "</script>"), 4u);
  EXPECT_NE(html.find("out&lt;b&gt;&amp;amp;&quot;quoted&quot; &#39;single&#39; &lt;/script&gt;"),
            std::string::npos);
}

TEST(Html, IsSelfContained) {
  const std::string html = CheckReportToHtml(MakeSampleReport());
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("{{"), std::string::npos);  // every placeholder filled
  EXPECT_NE(html.find("var uPlot="), std::string::npos);
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
}

TEST(Html, DrawsSqnrAlongTheGraphForAQuantizedTarget) {
  CheckReport r = MakeSampleReport();
  EXPECT_EQ(CheckReportToHtml(r).find("data-chart=\"quant_sqnr\""), std::string::npos);  // no quant report
  QuantReport q{.kind = "qdq", .rule = "steps of each tensor's QuantizeLinear scale", .compute_layers = 2,
                .compute_matched = 2};
  q.layers.push_back({.node = "/conv1/Conv", .op_type = "Conv",
                      .cumulative = {.measured = true, .sqnr_db = 36.3}, .local = {.measured = true, .sqnr_db = 36.3}});
  q.layers.push_back({.node = "/fc/Gemm", .op_type = "Gemm",
                      .cumulative = {.measured = true, .sqnr_db = 30.7}, .local = {.measured = true, .sqnr_db = 21.5}});
  q.worst_local = 1;
  r.quant = q;
  const std::string html = CheckReportToHtml(r);
  EXPECT_NE(html.find("data-chart=\"quant_sqnr\""), std::string::npos);
  EXPECT_NE(html.find("Worst local loss: <b class=\"mono\">/fc/Gemm</b>"), std::string::npos);
  EXPECT_NE(html.find("\"local_sqnr_db\":21.5"), std::string::npos);  // the chart's data
  EXPECT_NE(html.find("function drawSqnr"), std::string::npos);
}

TEST(Html, OptionalSectionsOnlyWhenPresent) {
  CheckReport r = MakeSampleReport();
  r.locate.reset();
  r.alignment.reset();
  r.layer_curve.clear();
  r.performance.clear();
  const std::string html = CheckReportToHtml(r);
  EXPECT_EQ(html.find("id=\"locate\""), std::string::npos);
  EXPECT_EQ(html.find("id=\"alignment\""), std::string::npos);
  EXPECT_EQ(html.find("data-chart=\"layer_curve\""), std::string::npos);
  EXPECT_EQ(html.find("data-chart=\"latency_runs\""), std::string::npos);
  const std::string full = CheckReportToHtml(MakeSampleReport());
  EXPECT_NE(full.find("id=\"locate\""), std::string::npos);
  EXPECT_NE(full.find("FusedConv_45"), std::string::npos);
  EXPECT_NE(full.find("folded into the Conv before it"), std::string::npos);
}

// (chart containers, those marked drawn) in a dumped DOM.
std::pair<size_t, size_t> ChartsDrawn(const std::string& dom) {
  const std::regex container("<div class=\"chart\"[^>]*data-chart=\"([a-z_]+)\"[^>]*>");
  size_t charts = 0, rendered = 0;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), container); it != std::sregex_iterator();
       ++it) {
    ++charts;
    rendered += it->str().find("data-rendered=\"true\"") != std::string::npos;
  }
  return {charts, rendered};
}

// Headless Chromium (Debian's `chromium`, installed by scripts/install-deps.sh).
class HtmlInChromium : public ::testing::Test {
 protected:
  static std::string Chromium() {
    for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
      if (fs::exists(p)) return p;
    return "";
  }
  // Runs chromium on `page` with `args`; returns stdout, fills *log with stderr.
  static std::string Run(const fs::path& page, const std::string& args, std::string* log) {
    const fs::path dir = page.parent_path();
    const std::string cmd =
        "timeout 90 " + Chromium() +
        " --headless --no-sandbox --disable-gpu --no-first-run --no-default-browser-check "
        "--user-data-dir=" +
        ShellQuote((dir / "profile").string()) +
        " --enable-logging=stderr --v=0 --virtual-time-budget=5000 " + args + " " +
        ShellQuote("file://" + page.string()) + " 2>" + ShellQuote((dir / "stderr.txt").string());
    std::string out;
    RunCommand(cmd, &out);
    *log = ReadAll(dir / "stderr.txt");
    return out;
  }
};

TEST_F(HtmlInChromium, DrawsEveryChartWithoutConsoleErrors) {
  if (Chromium().empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
  const testing::TempDir dir_tmp("parity_report");
  const fs::path dir = dir_tmp.path();
  const fs::path page = dir / "report.html";
  std::ofstream(page, std::ios::binary) << CheckReportToHtml(MakeSampleReport());

  std::string log;
  const std::string dom = Run(page, "--dump-dom", &log);
  ASSERT_NE(dom.find("</html>"), std::string::npos) << "no DOM dumped; chromium said:\n" << log;
  // Every chart container was drawn: 1 layer curve, 1 curve against PyTorch
  // (issue 28), 2 histograms (one per output: logits' two samples share one),
  // 2 latency.
  const auto [charts, rendered] = ChartsDrawn(dom);
  EXPECT_EQ(charts, 6u) << dom.substr(0, 2000);
  EXPECT_EQ(rendered, charts);
  EXPECT_EQ(Count(dom, "<canvas"), 6u);  // one uPlot canvas each
  EXPECT_NE(dom.find("<pre id=\"parity-errors\" class=\"script-errors\" hidden=\"\"></pre>"),
            std::string::npos)
      << "script errors reported in the page";
  // Chromium logs console messages (errors, CSP violations) as CONSOLE lines.
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);)
    EXPECT_EQ(line.find("CONSOLE"), std::string::npos) << line;

  const fs::path png = dir / "shot.png";
  Run(page, "--hide-scrollbars --window-size=1200,2000 --screenshot=" + ShellQuote(png.string()), &log);
  ASSERT_TRUE(fs::exists(png)) << log;
  // Not blank: many colours, a good share of non-white pixels, and the red
  // of the FAIL verdict. PIL when present, else a zlib PNG decoder.
  const std::string script = R"PY(
import sys, zlib, struct
def pixels(path):
    try:
        from PIL import Image
        im = Image.open(path).convert('RGB')
        return list(im.getdata())
    except ImportError:
        pass
    data = open(path, 'rb').read()
    pos, idat, w, h, ct = 8, b'', 0, 0, 0
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR': w, h, depth, ct = struct.unpack('>IIBB', body[:10])
        if kind == b'IDAT': idat += body
        pos += 12 + n
    bpp = {2: 3, 6: 4}[ct]
    raw, stride, out, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out += [tuple(line[i:i + 3]) for i in range(0, stride, bpp)]
        prev = line
    return out
px = pixels(sys.argv[1])
white = sum(1 for p in px if min(p) > 245)
red = sum(1 for p in px if p[0] > 170 and p[1] < 90 and p[2] < 90)
print(len(set(px)), round(1 - white / len(px), 4), red)
)PY";
  std::string out;
  ASSERT_EQ(RunCommand(PARITY_PYTHON " -c " + ShellQuote(script) + " " + ShellQuote(png.string()), &out), 0)
      << out;
  size_t colours = 0, red = 0;
  double ink = 0;
  std::istringstream(out) >> colours >> ink >> red;
  EXPECT_GT(colours, 50u) << out;
  EXPECT_GT(ink, 0.05) << out;
  EXPECT_GT(red, 200u) << out;
}

// Issue 28: nothing wider than the page in a 1400 px window, with every
// section present (the alignment, refusals, long names); screenshots kept
// in the test's folder for a person to look at.
TEST_F(HtmlInChromium, NothingIsWiderThanA1400PixelWindow) {
  if (Chromium().empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
  CheckReport r = MakeSampleReport();
  SampleResult refused{.name = "boundary_1x1_" + std::string(200, 'w'), .kind = "boundary",
                       .status = Verdict::kUnchecked, .error = "Invalid input shape " + std::string(300, 'q')};
  r.samples.push_back(refused);
  r.notes.push_back("a note " + std::string(400, 'n'));
  const testing::TempDir dir_tmp("parity_report");
  const fs::path page = dir_tmp.path() / "report.html";
  std::ofstream(page, std::ios::binary) << CheckReportToHtml(r);
  std::string log;
  const std::string dom = Run(page, "--window-size=1400,900 --dump-dom", &log);
  const std::smatch m = [&] {
    std::smatch found;
    std::regex_search(dom, found, std::regex("data-scroll-width=\"([0-9]+)\""));
    return found;
  }();
  ASSERT_FALSE(m.empty()) << "the page's script did not run:\n" << log;
  EXPECT_LE(std::stoi(m[1].str()), 1400) << "the page is wider than the window";
}

TEST_F(HtmlInChromium, PassingReportWithoutOptionalPartsHasNoErrors) {
  if (Chromium().empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
  CheckReport r = MakeSampleReport();
  r.overall = Verdict::kPass;
  r.stages.resize(2);
  r.samples.resize(1);
  r.layer_curve.clear();
  r.performance.clear();
  r.locate.reset();
  r.alignment.reset();
  const testing::TempDir dir_tmp("parity_report");
  const fs::path dir = dir_tmp.path();
  const fs::path page = dir / "report.html";
  std::ofstream(page, std::ios::binary) << CheckReportToHtml(r);
  std::string log;
  const std::string dom = Run(page, "--dump-dom", &log);
  ASSERT_NE(dom.find("</html>"), std::string::npos) << log;
  EXPECT_NE(dom.find("data-verdict=\"PASS\""), std::string::npos);
  EXPECT_EQ(ChartsDrawn(dom), std::make_pair(size_t{1}, size_t{1}));  // the one histogram
  EXPECT_NE(dom.find("No failed tests."), std::string::npos);
  EXPECT_NE(dom.find("<pre id=\"parity-errors\" class=\"script-errors\" hidden=\"\"></pre>"),
            std::string::npos);
  EXPECT_EQ(log.find("CONSOLE"), std::string::npos) << log;
}

}  // namespace
}  // namespace parity
