// render_gallery_html: the page, with its style and script inline. Every
// string from the data goes through html_escape.
#include <set>

#include <fmt/format.h>

#include "winnow/curation/gallery/gallery.h"
#include "winnow/curation/core/printable_text.h"
#include "word_diff.h"

namespace winnow::curation::gallery {

namespace {

constexpr const char* kStyle = R"css(
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#222;background:#f6f7f9}
header{position:sticky;top:0;z-index:2;background:#fff;border-bottom:1px solid #ddd;padding:8px 16px}
h1{font-size:18px;margin:0 0 4px}h2{font-size:16px;margin:24px 16px 8px}h3{font-size:14px;margin:12px 0 4px}
.bar{display:flex;flex-wrap:wrap;gap:8px;align-items:center}.bar label{font-size:12px;color:#555}
section{padding:0 16px 16px}.note{color:#555;font-size:12px}
.unit{background:#fff;border:1px solid #ddd;border-radius:6px;margin:8px 0;padding:8px;display:flex;flex-wrap:wrap;gap:8px;align-items:flex-start}
.unit.conflict{border-color:#c0392b;box-shadow:0 0 0 1px #c0392b}
.card{width:150px;font-size:12px;border:1px solid #eee;border-radius:4px;padding:4px;background:#fff;overflow-wrap:anywhere}
.card.original{background:#eef6ee}.card.text{width:320px}.card.neighbour{width:120px;opacity:.9}
.card img{display:block;max-width:112px;max-height:112px;margin:0 auto 4px;image-rendering:auto}
.key{font-family:ui-monospace,monospace;font-size:11px}.missing{color:#a33;font-size:11px}
.excerpt{white-space:pre-wrap;max-height:160px;overflow:auto;font-family:ui-monospace,monospace;font-size:11px;background:#fafafa}
mark{background:#ffe08a}.tag{display:inline-block;border-radius:3px;padding:0 4px;font-size:11px;background:#eee}
.tag.bad{background:#f8d7d4}.tag.done{background:#d4edda}
.verdict button{font-size:11px;padding:1px 4px;margin:1px}
.card.v-keep{outline:3px solid #2a9d8f}.card.v-drop{outline:3px solid #c0392b;opacity:.6}
.card.v-not_duplicate{outline:3px solid #4e79a7}.card.v-relabel{outline:3px solid #f28e2b}
.units.strip{display:flex;flex-wrap:wrap;gap:8px}.units.strip>.unit{margin:0}
.hidden{display:none!important}
)css";

// The page's script: filters, sorting, verdicts and their download.
constexpr const char* kScript = R"js(
'use strict';
const verdicts = new Map();
const $ = (s, r = document) => Array.from(r.querySelectorAll(s));
function cardsOf(key) { return $('.card[data-item]').filter(c => c.dataset.item === key); }
function setVerdict(key, verdict, label) {
  const now = verdicts.get(key);
  if (now && now.verdict === verdict && now.label === label) verdicts.delete(key);
  else verdicts.set(key, {verdict, label});
  const v = verdicts.get(key);
  for (const c of cardsOf(key)) {
    c.classList.remove('v-keep', 'v-drop', 'v-relabel', 'v-not_duplicate');
    const badge = c.querySelector('.chosen');
    if (v) c.classList.add('v-' + v.verdict);
    if (badge) badge.textContent = v ? (v.verdict + (v.label ? ' → ' + v.label : '')) : '';
  }
  document.getElementById('count').textContent = verdicts.size;
}
document.addEventListener('click', e => {
  const b = e.target.closest('button[data-verdict]');
  if (b) { setVerdict(b.closest('.card').dataset.item, b.dataset.verdict, ''); return; }
  const g = e.target.closest('button[data-group-verdict]');
  if (g) for (const c of $('.card.copy', g.closest('.unit'))) setVerdict(c.dataset.item, g.dataset.groupVerdict, '');
});
document.addEventListener('change', e => {
  if (e.target.matches('select.relabel') && e.target.value) {
    setVerdict(e.target.closest('.card').dataset.item, 'relabel', e.target.value);
    e.target.value = '';
  } else if (e.target.closest('#filters')) applyFilters();
});
document.getElementById('search').addEventListener('input', applyFilters);
document.getElementById('reason').addEventListener('input', applyFilters);
function csvCell(s) { return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s; }
function verdictFile() {
  const reviewer = document.getElementById('reviewer').value;
  const rows = ['item,verdict,label,reviewer,note'];
  for (const [item, v] of verdicts) rows.push([item, v.verdict, v.label, reviewer, 'gallery'].map(csvCell).join(','));
  return rows.join('\n') + '\n';
}
document.getElementById('download').addEventListener('click', () => {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([verdictFile()], {type: 'text/csv'}));
  a.download = 'verdicts.csv';
  document.body.appendChild(a); a.click(); a.remove();
});
const FILTERS = ['section', 'source', 'label', 'status', 'batch'];
function applyFilters() {
  const want = Object.fromEntries(FILTERS.map(f => [f, document.getElementById('f-' + f).value]));
  const text = document.getElementById('search').value.toLowerCase();
  const why = document.getElementById('reason').value.toLowerCase();
  for (const s of $('section[data-section]')) s.classList.toggle('hidden', want.section !== '' && s.dataset.section !== want.section);
  for (const u of $('.unit')) {
    const cards = $('.card[data-item]:not(.neighbour)', u);
    const ok = cards.some(c => FILTERS.slice(1).every(f => want[f] === '' || c.dataset[f] === want[f]) &&
                               (text === '' || c.dataset.item.toLowerCase().includes(text)) &&
                               (why === '' || c.dataset.reason.toLowerCase().includes(why)));
    u.classList.toggle('hidden', !ok);
  }
  const order = document.getElementById('f-sort').value;
  for (const list of $('.units')) {
    const units = $(':scope > .unit', list);
    units.sort((a, b) => order === 'key' ? a.dataset.key.localeCompare(b.dataset.key) : a.dataset.rank - b.dataset.rank);
    for (const u of units) list.appendChild(u);
  }
  document.getElementById('shown').textContent = $('.unit:not(.hidden)').filter(u => !u.closest('section.hidden')).length;
}
applyFilters();
)js";

using E = std::string;
E esc(std::string_view s) {
  return html_escape(s);
}

struct Choices {
  std::set<std::string> sources, labels, statuses, batches;
  void add(const GalleryItem& i) {
    sources.insert(i.source);
    if (!i.label.empty()) labels.insert(i.label);
    statuses.insert(i.status);
    batches.insert(std::to_string(i.batch));
  }
};

std::string select(const char* id, const char* what, const std::set<std::string>& values) {
  std::string html =
      fmt::format("<label>{} <select id=\"f-{}\"><option value=\"\">all</option>", what, id);
  for (const std::string& v : values) {
    html +=
        fmt::format("<option value=\"{0}\">{1}</option>", esc(v), v.empty() ? "(none)" : esc(v));
  }
  return html + "</select></label>";
}

class Page {
 public:
  explicit Page(const Gallery& g) : g_(g) {
    for (const std::string& l : g.labels)
      label_options_ += fmt::format("<option>{}</option>", esc(l));
  }

  // One sample's card; `role` is a CSS class (original, copy, issue, neighbour).
  std::string card(const GalleryItem& i, const char* role, const std::string& extra,
                   bool verdicts) {
    choices_.add(i);
    const bool text = !i.text.empty();
    std::string html = fmt::format(
        "<div class=\"card {}{}\" data-item=\"{}\" data-source=\"{}\" data-label=\"{}\" "
        "data-status=\"{}\" data-batch=\"{}\" data-id=\"{}\" data-reason=\"{}\">",
        role, text ? " text" : "", esc(i.key), esc(i.source), esc(i.label), esc(i.status), i.batch,
        i.id, esc(i.reason));
    if (!i.thumbnail.empty()) {
      html +=
          fmt::format("<img alt=\"{}\" src=\"{}\">", esc(i.key), i.thumbnail);  // data: URI, base64
    }
    if (text && extra.find("class=\"excerpt\"") == std::string::npos) {
      html += fmt::format("<div class=\"excerpt\">{}</div>", html_escape(i.text.substr(0, 600)));
    }
    if (!i.missing.empty()) html += fmt::format("<div class=\"missing\">{}</div>", esc(i.missing));
    html += fmt::format("<div class=\"key\">{}</div><div>label <b>{}</b> · {}</div>", esc(i.key),
                        i.label.empty() ? "none" : esc(i.label), esc(i.status));
    if (i.width && i.height) html += fmt::format("<div>{} × {} px</div>", *i.width, *i.height);
    html += extra;
    if (!i.reason.empty()) html += fmt::format("<div class=\"note\">{}</div>", esc(i.reason));
    if (!i.review.empty())
      html += fmt::format("<span class=\"tag done\">reviewed: {}</span>", esc(i.review));
    if (verdicts) {
      html +=
          "<div class=\"verdict\"><button data-verdict=\"keep\">keep</button>"
          "<button data-verdict=\"drop\">drop</button>";
      if (std::string_view(role) == "copy") {
        html += "<button data-verdict=\"not_duplicate\">not duplicate</button>";
      }
      html += "<select class=\"relabel\"><option value=\"\">relabel…</option>" + label_options_ +
              "</select><div class=\"chosen tag\"></div></div>";
    }
    return html + "</div>";
  }

  std::string duplicates() {
    std::string html = fmt::format(
        "<section data-section=\"duplicates\"><h2>Duplicate groups</h2><p class=\"note\">{} groups "
        "({} copies); {} shown, label conflicts first, then the least similar copies.{}</p>"
        "<div class=\"units\">",
        g_.groups_total, g_.copies_total, g_.groups.size(),
        left_out(g_.groups_total, g_.groups.size()));
    std::size_t rank = 0;
    for (const DuplicateGroup& group : g_.groups) {
      html += fmt::format("<div class=\"unit{}\" data-rank=\"{}\" data-key=\"{}\">",
                          group.label_conflict ? " conflict" : "", rank++, esc(group.original.key));
      html += card(
          group.original, "original",
          "<div><span class=\"tag\">kept</span>" +
              std::string(group.label_conflict ? " <span class=\"tag bad\">label conflict</span>"
                                               : "") +
              "</div><div class=\"verdict\"><button data-group-verdict=\"not_duplicate\">"
              "none are copies</button><button data-group-verdict=\"drop\">drop the "
              "copies</button></div>",
          true);
      for (const DuplicateCopy& c : group.copies) {
        std::string extra =
            fmt::format("<div><span class=\"tag{}\">{} {:.4f}</span></div>",
                        c.label_conflict ? " bad" : "", c.exact ? "exact" : "near", c.similarity);
        if (!c.copy_marked_html.empty()) {
          extra += "<div class=\"excerpt\">" + c.copy_marked_html +
                   "</div><div class=\"note\">original:</div>"
                   "<div class=\"excerpt\">" +
                   c.original_marked_html + "</div>";
        }
        html += card(c.item, "copy", extra, true);
      }
      html += "</div>";
    }
    return html + "</div></section>";
  }

  std::string label_issues() {
    std::string html = fmt::format(
        "<section data-section=\"label-issues\"><h2>Label issues</h2><p class=\"note\">{} flagged; "
        "{} shown, lowest label quality first, each beside its nearest labelled neighbours.{}</p>"
        "<div class=\"units\">",
        g_.label_issues_total, g_.label_issues.size(),
        left_out(g_.label_issues_total, g_.label_issues.size()));
    std::size_t rank = 0;
    for (const LabelIssueEntry& e : g_.label_issues) {
      html += fmt::format("<div class=\"unit\" data-rank=\"{}\" data-key=\"{}\">", rank++,
                          esc(e.item.key));
      std::string extra;
      if (!e.suggested.empty()) {
        extra += fmt::format("<div>suggested <b>{}</b>{}</div>", esc(e.suggested),
                             e.confidence ? fmt::format(" ({:.0f}%)", *e.confidence * 100) : "");
      }
      if (e.quality) extra += fmt::format("<div>label quality {:.3f}</div>", *e.quality);
      html += card(e.item, "issue", extra, true);
      for (const GalleryItem& n : e.neighbours) html += card(n, "neighbour", "", false);
      html += "</div>";
    }
    return html + "</div></section>";
  }

  std::string quality() {
    std::string html = "<section data-section=\"image-quality\"><h2>Image-quality issues</h2>";
    if (g_.strips.empty()) html += "<p class=\"note\">No image has an image-quality issue.</p>";
    for (const QualityStrip& s : g_.strips) {
      html +=
          fmt::format("<h3>{} ({} images; {} shown, worst first{})</h3><div class=\"units strip\">",
                      esc(s.issue), s.total, s.worst.size(), left_out(s.total, s.worst.size()));
      std::size_t rank = 0;
      for (const QualityEntry& q : s.worst) {
        html += fmt::format("<div class=\"unit\" data-rank=\"{}\" data-key=\"{}\">", rank++,
                            esc(q.item.key));
        html += card(q.item, "quality",
                     fmt::format("<div>{} score {:.3f}</div>", esc(s.issue), q.score), true);
        html += "</div>";
      }
      html += "</div>";
    }
    return html + "</section>";
  }

  std::string outliers() {
    std::string html = fmt::format(
        "<section data-section=\"outliers\"><h2>Outliers</h2><p class=\"note\">The accepted "
        "samples least similar to their nearest other judged sample (today's index), among the {} "
        "of highest information gain; {} shown, least similar first.</p><div class=\"units "
        "strip\">",
        g_.outlier_candidates, g_.outliers.size());
    std::size_t rank = 0;
    for (const OutlierEntry& o : g_.outliers) {
      html += fmt::format("<div class=\"unit\" data-rank=\"{}\" data-key=\"{}\">", rank++,
                          esc(o.item.key));
      html += card(o.item, "outlier",
                   fmt::format("<div>nearest similarity {:.3f}</div><div class=\"note\">nearest: "
                               "{}</div>",
                               o.nearest_similarity, esc(o.nearest_key)),
                   true);
      html += "</div>";
    }
    return html + "</div></section>";
  }

  std::string header() const {
    return fmt::format(
        "<header><h1>winnow review gallery</h1><div class=\"note\">{}: {} pictures, {} items "
        "without one. Verdicts go to a file: download it and run <code>winnow review --db {} "
        "verdicts.csv</code>.</div><div class=\"bar\" id=\"filters\">"
        "<label>show <select id=\"f-section\"><option value=\"\">every section</option>"
        "<option value=\"duplicates\">duplicate groups</option><option "
        "value=\"label-issues\">label "
        "issues</option><option value=\"image-quality\">image-quality "
        "issues</option><option value=\"outliers\">outliers</option></select></label>"
        "{}{}{}{}<label>key <input id=\"search\" type=\"search\" placeholder=\"part of a "
        "key\"></label><label>reason <input id=\"reason\" type=\"search\" "
        "placeholder=\"e.g. label conflict\"></label>"
        "<label>order <select id=\"f-sort\"><option value=\"rank\">worst first</option>"
        "<option value=\"key\">by key</option></select></label><span class=\"note\"><span "
        "id=\"shown\">"
        "</span> shown</span></div><div class=\"bar\"><label>reviewer <input id=\"reviewer\" "
        "placeholder=\"your name\"></label><button id=\"download\">Download verdicts (<span "
        "id=\"count\">0</span>)</button></div></header>",
        esc(g_.database), g_.thumbnails, g_.missing, esc(g_.database),
        select("source", "source", choices_.sources), select("label", "class", choices_.labels),
        select("status", "status", choices_.statuses), select("batch", "batch", choices_.batches));
  }

 private:
  static std::string left_out(std::size_t total, std::size_t shown) {
    return total > shown
               ? fmt::format(" {} not shown (winnow gallery --max-per-section).", total - shown)
               : "";
  }

  const Gallery& g_;
  Choices choices_;
  std::string label_options_;
};

}  // namespace

std::string render_gallery_html(const Gallery& gallery) {
  Page page(gallery);
  const std::string body =
      page.duplicates() + page.label_issues() + page.quality() + page.outliers();
  return fmt::format(
      "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
      "content=\"width=device-width\"><title>winnow review gallery: {}</title><style>{}</style>"
      "</head><body>{}{}<script>{}</script></body></html>\n",
      esc(gallery.database), kStyle, page.header(), body, kScript);
}

}  // namespace winnow::curation::gallery
