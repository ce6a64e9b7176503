// plan_annotation_tasks (annotation_tasks.h): the store's samples and
// annotations as one Dawid-Skene problem, each sample's class posterior, and
// the tasks with the largest expected gain per cost.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "expected_gain.h"
#include "winnow/curation/annotate/annotation_tasks.h"
#include "winnow/curation/dataset/label_names.h"
#include "winnow/curation/labels/confident_learning.h"
#include "winnow/curation/labels/dawid_skene.h"
#include "winnow/curation/readers/pred_probs_reader.h"
#include "winnow/curation/review/consensus_labels.h"
#include "winnow/curation/review/training_feedback.h"
#include "winnow/curation/review/verdicts.h"
#include "winnow/error.h"
#include "winnow/store/vector_table.h"

namespace winnow::curation::annotate {

namespace {

constexpr const char* kNeighbours = "(neighbours)";
constexpr std::size_t kSearchChunk = 1024;
// Below this expected gain a task teaches nothing worth its cost: not offered.
constexpr double kNoGain = 1e-6;

// One sample that may be annotated, with the answers the consensus takes.
struct Item {
  store::SampleRecord sample;
  std::vector<std::pair<int, int>> answers;  // (annotator, class)
  std::set<std::string> annotated_by;
  std::size_t annotations = 0;  // real annotations (not the neighbours' or the label's vote)
};

// The problem: items, classes (store label -> index) and voters.
struct Crowd {
  std::vector<Item> items;
  std::unordered_map<std::int64_t, std::size_t> item_of;  // sample id -> index
  std::map<std::int64_t, int> class_of;
  std::vector<std::int64_t> label_of_class;
  std::map<std::string, int> voter_of;
  std::vector<std::string> voters;
  std::vector<std::size_t> voter_labels;  // answers per voter
  std::vector<bool> person;               // a real annotator (not a stand-in vote)

  int voter(const std::string& name, bool is_person) {
    auto [it, fresh] = voter_of.try_emplace(name, static_cast<int>(voters.size()));
    if (fresh) {
      voters.push_back(name);
      voter_labels.push_back(0);
      person.push_back(is_person);
    }
    return it->second;
  }
  int class_index(std::int64_t label) {
    auto [it, fresh] = class_of.try_emplace(label, static_cast<int>(label_of_class.size()));
    if (fresh) label_of_class.push_back(label);
    return it->second;
  }
  // The class item i's annotators give by majority (its stored label, the
  // last consensus's, breaking a tie), or its own label's without
  // annotations: what the neighbours vote with, as in rejudge --consensus.
  std::optional<int> said(std::size_t i) const {
    const Item& item = items[i];
    std::map<std::int64_t, std::int64_t> votes;  // store label -> annotations
    for (const auto& [who, what] : item.answers) {
      if (person[static_cast<std::size_t>(who)]) {
        ++votes[label_of_class[static_cast<std::size_t>(what)]];
      }
    }
    std::optional<std::int64_t> label = labels::majority_label(votes, item.sample.label);
    if (!label) label = item.sample.label;
    if (!label) return std::nullopt;
    return class_of.at(*label);
  }
  void answer(std::size_t item, int who, int what) {
    items[item].answers.emplace_back(who, what);
    ++voter_labels[static_cast<std::size_t>(who)];
  }
};

Crowd read_crowd(Dataset& dataset) {
  store::MetadataStore& store = dataset.store();
  Crowd crowd;
  const std::set<std::int64_t> reviewed = review::reviewed_samples(store);
  store.for_each_sample([&](const store::SampleRecord& s) {
    if (s.status != store::SampleStatus::accepted && s.status != store::SampleStatus::label_issue)
      return;
    if (reviewed.count(s.id) > 0) return;
    crowd.item_of[s.id] = crowd.items.size();
    crowd.items.push_back({s, {}, {}, 0});
    if (s.label) crowd.class_index(*s.label);
  });
  std::unordered_map<std::int64_t, std::string> names;
  for (const auto& c : store.contributors()) names[c.id] = c.name;
  store.for_each_annotation([&](const store::MetadataStore::AnnotationRow& a) {
    const auto it = crowd.item_of.find(a.sample_id);
    if (it == crowd.item_of.end()) return;
    const std::string name = a.annotator_id ? names[*a.annotator_id] : "(unknown)";
    crowd.answer(it->second, crowd.voter(name, true), crowd.class_index(a.label));
    crowd.items[it->second].annotated_by.insert(name);
    ++crowd.items[it->second].annotations;
  });
  // A label with no annotations behind it is one vote, by its source.
  for (std::size_t i = 0; i < crowd.items.size(); ++i) {
    const store::SampleRecord& s = crowd.items[i].sample;
    if (crowd.items[i].annotations == 0 && s.label) {
      const int who = crowd.voter(
          "(label from source " + (s.source.empty() ? "unknown" : s.source) + ")", false);
      crowd.answer(i, who, crowd.class_index(*s.label));
    }
  }
  return crowd;
}

// The label most of a sample's nearest labelled samples carry, as one more
// voter (as in rejudge --consensus, and CROWDLAB's classifier).
void add_neighbour_votes(Dataset& dataset, Crowd& crowd) {
  if (crowd.class_of.empty()) return;
  const CurationConfig& config = dataset.config();
  const std::size_t dim = dataset.embedder().dim();
  index::VectorIndex& index = dataset.index();
  if (index.size() < 2) return;
  store::VectorTable vectors(dataset.store().database());
  std::vector<std::int64_t> ids;
  for (const std::int64_t id : vectors.judged_ids()) {
    if (crowd.item_of.count(id) > 0) ids.push_back(id);
  }
  const int k = static_cast<int>(std::min<std::size_t>(
      static_cast<std::size_t>(review::consensus_neighbours(config.label_k)) + 1, index.size()));
  const int who = crowd.voter(kNeighbours, false);
  std::vector<std::optional<int>> said;  // per item: the class its neighbours see
  for (std::size_t i = 0; i < crowd.items.size(); ++i) said.push_back(crowd.said(i));
  for (std::size_t from = 0; from < ids.size(); from += kSearchChunk) {
    const std::vector<std::int64_t> chunk(
        ids.begin() + static_cast<std::ptrdiff_t>(from),
        ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), from + kSearchChunk)));
    std::vector<float> queries;
    vectors.read_embeddings(chunk, dim, queries);
    const index::SearchResults found = index.search(queries, k);
    for (std::size_t q = 0; q < chunk.size(); ++q) {
      std::map<int, int> votes;
      int labelled = 0;
      for (std::size_t r = 0; r < found.k; ++r) {
        const std::int64_t n = found.id(q, r);
        if (n < 0 || n == chunk[q]) continue;
        const auto it = crowd.item_of.find(n);
        if (it == crowd.item_of.end()) continue;
        const std::optional<int> label = said[it->second];
        if (!label) continue;
        ++votes[*label];
        ++labelled;
      }
      if (labelled < config.min_label_neighbours) continue;
      int best = -1, most = 0;
      for (const auto& [c, n] : votes) {
        if (n > most) most = n, best = c;
      }
      crowd.answer(crowd.item_of.at(chunk[q]), who, best);
    }
  }
}

// A model's predictions as one more voter: the most probable class of each
// sample the file covers whose class name the dataset knows.
void add_model_votes(Dataset& dataset, Crowd& crowd, const std::string& path) {
  if (path.empty()) return;
  const readers::PredProbsFile file =
      readers::read_pred_probs(path, labels::kPredProbsSumTolerance);
  const readers::PredProbsTable& table = file.table;
  std::vector<int> class_of_column;
  for (const std::string& name : table.class_names) {
    const std::optional<std::int64_t> label = dataset.label_names().find(name);
    class_of_column.push_back(label && crowd.class_of.count(*label) ? crowd.class_of.at(*label)
                                                                    : -1);
  }
  const int who = crowd.voter("(model)", false);
  for (std::size_t i = 0; i < crowd.items.size(); ++i) {
    const auto row = table.rows.find(crowd.items[i].sample.external_key);
    if (row == table.rows.end()) continue;
    const auto top = static_cast<std::size_t>(
        std::max_element(row->second.begin(), row->second.end()) - row->second.begin());
    if (class_of_column[top] >= 0) crowd.answer(i, who, class_of_column[top]);
  }
}

// A training run's model as one more voter: the label it predicted most for
// each sample whose statistics say (winnow import-training).
void add_training_votes(Dataset& dataset, Crowd& crowd) {
  const review::ExtraVoter model = review::training_voter(dataset.store());
  if (model.votes.empty()) return;
  const int who = crowd.voter(model.name, false);
  for (std::size_t i = 0; i < crowd.items.size(); ++i) {  // in item order: a deterministic plan
    const auto vote = model.votes.find(crowd.items[i].sample.id);
    if (vote != model.votes.end()) crowd.answer(i, who, crowd.class_index(vote->second));
  }
}

// A voter's K x K confusion [c][k], also from the one-coin model.
std::vector<double> confusion_of(const labels::DawidSkeneResult& ds, std::size_t voter) {
  const std::size_t k = ds.classes;
  std::vector<double> out(k * k);
  for (std::size_t c = 0; c < k; ++c) {
    for (std::size_t given = 0; given < k; ++given)
      out[c * k + given] = ds.confusion_at(voter, c, given);
  }
  return out;
}

// The people a request chooses among, each with his shrunk confusion; one
// "typical annotator" (name "") without a pool: the people's confusions
// averaged by their labels.
struct Chooser {
  PoolAnnotator who;
  std::vector<double> confusion;
  double labels = 0.0;
  std::size_t left = 0;  // capacity left
};

std::vector<Chooser> choosers(const TaskRequest& request, const Crowd& crowd,
                              const labels::DawidSkeneResult& ds) {
  const std::size_t k = ds.classes;
  std::vector<Chooser> out;
  const auto unlimited = std::numeric_limits<std::size_t>::max();
  if (request.pool.empty()) {
    std::vector<double> sum(k * k, 0.0);
    double labels = 0.0;
    for (std::size_t v = 0; v < crowd.voters.size(); ++v) {
      if (!crowd.person[v]) continue;
      const double n = static_cast<double>(crowd.voter_labels[v]);
      const std::vector<double> c = confusion_of(ds, v);
      for (std::size_t e = 0; e < sum.size(); ++e) sum[e] += n * c[e];
      labels += n;
    }
    if (labels > 0) {
      for (double& e : sum) e /= labels;
    } else {
      sum.clear();
    }
    Chooser typical;  // name "", cost 1
    typical.confusion =
        shrunk_confusion(sum, k, labels, request.prior_accuracy, request.prior_labels);
    typical.labels = labels;
    typical.left = unlimited;
    out.push_back(std::move(typical));
    return out;
  }
  for (const PoolAnnotator& a : request.pool) {
    const auto it = crowd.voter_of.find(a.name);
    const bool known =
        it != crowd.voter_of.end() && crowd.person[static_cast<std::size_t>(it->second)];
    const double labels =
        known ? static_cast<double>(crowd.voter_labels[static_cast<std::size_t>(it->second)]) : 0.0;
    const std::vector<double> estimated =
        known ? confusion_of(ds, static_cast<std::size_t>(it->second)) : std::vector<double>();
    Chooser chooser;
    chooser.who = a;
    chooser.confusion =
        shrunk_confusion(estimated, k, labels, request.prior_accuracy, request.prior_labels);
    chooser.labels = labels;
    chooser.left = a.capacity.value_or(unlimited);
    out.push_back(std::move(chooser));
  }
  return out;
}

// One (item, chooser) offer in the queue: best score first, then the lower
// sample id, then the earlier chooser.
struct Offer {
  double score;
  double gain;
  std::size_t item;
  std::size_t chooser;
  bool operator<(const Offer& o) const {
    if (score != o.score) return score < o.score;
    if (item != o.item) return item > o.item;
    return chooser > o.chooser;
  }
};

std::string reason_of(const Item& item, const std::vector<double>& p, int likely,
                      const std::string& likely_name, const Chooser& c, std::size_t k,
                      const LabelNames& names) {
  std::string why;
  if (item.annotations == 0 && !item.sample.label) {
    why = fmt::format("unlabelled; most likely {} (posterior {:.2f})", likely_name,
                      p[static_cast<std::size_t>(likely)]);
  } else {
    why = fmt::format("consensus {} at posterior {:.2f} over {} annotations", likely_name,
                      p[static_cast<std::size_t>(likely)], item.annotations);
  }
  static_cast<void>(names);
  if (!c.who.name.empty()) {
    const auto l = static_cast<std::size_t>(likely);
    why += fmt::format("; {} answers {} right with p {:.2f} ({} labels seen), cost {}", c.who.name,
                       likely_name, c.confusion[l * k + l], static_cast<std::size_t>(c.labels),
                       c.who.cost);
  }
  return why;
}

// Up to `budget` tasks, one per item, each chooser within his capacity,
// taken best first. Without a price an offer's score is its gain per cost;
// with one, its gain less price x cost, and only positive ones are taken.
std::vector<Offer> select_tasks(const std::vector<std::vector<double>>& gains,
                                const std::vector<Chooser>& people, std::size_t budget,
                                std::optional<double> price) {
  std::vector<std::size_t> left;
  for (const Chooser& c : people) left.push_back(c.left);
  std::vector<std::vector<Offer>> offers(gains.size());  // each item's, best first
  std::vector<std::size_t> next(gains.size(), 0);
  std::priority_queue<Offer> queue;
  for (std::size_t i = 0; i < gains.size(); ++i) {
    for (std::size_t c = 0; c < people.size(); ++c) {
      const double gain = gains[i][c];
      if (gain <= kNoGain) continue;  // not his to take, or nothing to learn
      const double score = price ? gain - *price * people[c].who.cost : gain / people[c].who.cost;
      if (price && score <= 0) continue;
      offers[i].push_back({score, gain, i, c});
    }
    std::sort(offers[i].begin(), offers[i].end(),
              [](const Offer& a, const Offer& b) { return b < a; });
    if (!offers[i].empty()) queue.push(offers[i][next[i]++]);
  }
  std::vector<Offer> chosen;
  while (!queue.empty() && chosen.size() < budget) {
    const Offer o = queue.top();
    queue.pop();
    if (left[o.chooser] == 0) {  // taken by better offers: the item's next annotator
      if (next[o.item] < offers[o.item].size()) queue.push(offers[o.item][next[o.item]++]);
      continue;
    }
    --left[o.chooser];
    chosen.push_back(o);
  }
  return chosen;
}

double cost_of(const std::vector<Offer>& tasks, const std::vector<Chooser>& people) {
  double cost = 0.0;
  for (const Offer& o : tasks) cost += people[o.chooser].who.cost;
  return cost;
}

// The tasks with the largest total gain whose cost stays within `max_cost`:
// gain less price x cost, at the lowest price (found by bisection) at which
// the tasks cost no more, a Lagrangian relaxation of the budgeted choice.
std::vector<Offer> within_cost(const std::vector<std::vector<double>>& gains,
                               const std::vector<Chooser>& people, std::size_t budget,
                               double max_cost) {
  std::vector<Offer> best = select_tasks(gains, people, budget, 0.0);
  if (cost_of(best, people) <= max_cost) return best;
  double low = 0.0, high = 1.0;
  for (const Chooser& c : people) high = std::max(high, 1.0 / c.who.cost);  // gains are at most 1
  best.clear();
  for (int step = 0; step < 40; ++step) {
    const double price = (low + high) / 2;
    std::vector<Offer> tasks = select_tasks(gains, people, budget, price);
    if (cost_of(tasks, people) <= max_cost) {
      best = std::move(tasks);
      high = price;
    } else {
      low = price;
    }
  }
  return best;
}

// Replaces the last `share` of each pool annotator's tasks by calibration
// items: the samples with the surest consensus (posterior at least 0.95,
// two or more annotations) he has not answered. Their answers cost a task
// but grade him on known items, so that his confusion stays identifiable
// when his other tasks are all hard ones (an annotator asked only where the
// consensus is unsure cannot be told from the items' difficulty).
void calibrate(const Crowd& crowd, const std::vector<std::vector<double>>& posteriors,
               const std::vector<Chooser>& people, double share, std::vector<Offer>& chosen,
               std::vector<bool>& calibration) {
  if (share <= 0 || people.size() < 2 || people[0].who.name.empty()) return;
  std::vector<std::size_t> sure;  // items by descending posterior
  for (std::size_t i = 0; i < crowd.items.size(); ++i) {
    const double top = *std::max_element(posteriors[i].begin(), posteriors[i].end());
    if (top >= 0.95 && crowd.items[i].annotations >= 2) sure.push_back(i);
  }
  std::stable_sort(sure.begin(), sure.end(), [&](std::size_t a, std::size_t b) {
    return *std::max_element(posteriors[a].begin(), posteriors[a].end()) >
           *std::max_element(posteriors[b].begin(), posteriors[b].end());
  });
  std::set<std::size_t> taken;
  for (const Offer& o : chosen) taken.insert(o.item);
  for (std::size_t c = 0; c < people.size(); ++c) {
    std::vector<std::size_t> his;  // positions in `chosen`, last first
    for (std::size_t t = chosen.size(); t-- > 0;) {
      if (chosen[t].chooser == c) his.push_back(t);
    }
    const auto replace =
        static_cast<std::size_t>(std::floor(share * static_cast<double>(his.size())));
    std::size_t next = 0;
    for (std::size_t r = 0; r < replace; ++r) {
      while (next < sure.size() &&
             (taken.count(sure[next]) > 0 ||
              crowd.items[sure[next]].annotated_by.count(people[c].who.name) > 0)) {
        ++next;
      }
      if (next == sure.size()) break;
      const std::size_t t = his[r];
      taken.insert(sure[next]);
      chosen[t] = {0.0, 0.0, sure[next], c};
      calibration[t] = true;
      ++next;
    }
  }
}

}  // namespace

TaskPlan plan_annotation_tasks(Dataset& dataset, const TaskRequest& request) {
  WINNOW_THROW_IF_NOT_KIND(request.prior_accuracy > 0 && request.prior_accuracy < 1, invalid_input,
                           "the prior accuracy {} is not between 0 and 1", request.prior_accuracy);
  Crowd crowd = read_crowd(dataset);
  TaskPlan plan;
  plan.candidates = crowd.items.size();
  if (crowd.items.empty() || request.budget == 0) return plan;
  WINNOW_THROW_IF_NOT_KIND(crowd.class_of.size() >= 2, invalid_input,
                           "{}: the dataset's labels and annotations name {} class(es); what to "
                           "annotate next needs at least two",
                           dataset.path(), crowd.class_of.size());
  add_neighbour_votes(dataset, crowd);
  add_model_votes(dataset, crowd, request.pred_probs);
  add_training_votes(dataset, crowd);

  labels::CrowdLabels crowd_labels;
  crowd_labels.classes = crowd.class_of.size();
  crowd_labels.annotators = std::max<std::size_t>(1, crowd.voters.size());
  for (const Item& item : crowd.items) crowd_labels.add_item(item.answers);
  const labels::DawidSkeneResult ds =
      labels::dawid_skene(crowd_labels, review::consensus_options());
  const std::size_t k = ds.classes;

  const std::vector<Chooser> people = choosers(request, crowd, ds);
  std::vector<std::vector<double>> posteriors(crowd.items.size());
  // gains[i][c]: what chooser c's answer on item i is worth (task_value);
  // negative: he may not take it.
  std::vector<std::vector<double>> gains(crowd.items.size(),
                                         std::vector<double>(people.size(), -1.0));
  for (std::size_t i = 0; i < crowd.items.size(); ++i) {
    posteriors[i] = labels::item_posterior(ds, crowd_labels, i);
    for (std::size_t c = 0; c < people.size(); ++c) {
      if (crowd.items[i].annotated_by.count(people[c].who.name) > 0 || people[c].left == 0)
        continue;
      gains[i][c] = task_value(posteriors[i], people[c].confusion);
    }
  }
  std::vector<Offer> chosen = select_tasks(gains, people, request.budget, std::nullopt);
  if (request.max_cost) chosen = within_cost(gains, people, request.budget, *request.max_cost);
  std::vector<bool> calibration(chosen.size(), false);
  calibrate(crowd, posteriors, people, request.calibration, chosen, calibration);

  const LabelNames& names = dataset.label_names();
  for (const Offer& o : chosen) {
    const Chooser& c = people[o.chooser];
    const Item& item = crowd.items[o.item];
    const std::vector<double>& p = posteriors[o.item];
    const int likely = static_cast<int>(std::max_element(p.begin(), p.end()) - p.begin());
    const std::string likely_name =
        names.name_of(crowd.label_of_class[static_cast<std::size_t>(likely)]);
    AnnotationTask task;
    task.sample_id = item.sample.id;
    task.item = item.sample.external_key;
    task.annotator = c.who.name;
    task.gain = o.gain;
    task.cost = c.who.cost;
    task.score = o.gain / c.who.cost;
    task.likely_label = likely_name;
    task.posterior = p[static_cast<std::size_t>(likely)];
    task.annotations = item.annotations;
    task.reason =
        calibration[&o - chosen.data()]
            ? fmt::format(
                  "calibration: consensus {} at posterior {:.2f} over {} "
                  "annotations grades {}",
                  likely_name, p[static_cast<std::size_t>(likely)], item.annotations, c.who.name)
            : reason_of(item, p, likely, likely_name, c, k, names);
    plan.expected_gain += task.gain;
    plan.cost += task.cost;
    plan.tasks.push_back(std::move(task));
  }
  return plan;
}

}  // namespace winnow::curation::annotate
