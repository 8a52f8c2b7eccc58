/**
 * A small judged collection for the embeddings bench (bench/embed-bench.ts), written for it: 24 short documents
 * on distinct everyday and technical topics, and two query sets with one relevant document each.
 * - `paraphrased`: each query says what its document says in other words, sharing no word stem with it (keyword
 *   search is known to fail there: BM25 has no term to match);
 * - `keyword`: each query reuses the document's own distinctive words (the set keyword search is made for).
 * No model ever saw these judgments; they are the author's, checked by hand for the no-shared-stem rule.
 */

export interface EmbedJudgedQuery {
  query: string;
  /** The path of the one relevant document. */
  relevant: string;
}

export const EMBED_CORPUS: ReadonlyArray<{ path: string; content: string }> = [
  {
    path: "ops/key-rotation.md",
    content: "Rotating credentials: generate a new secret, deploy it everywhere, then revoke the old one after a grace period.",
  },
  { path: "ops/backups.md", content: "Nightly snapshots of the database are copied to cold storage and retained for thirty days." },
  {
    path: "ops/incident.md",
    content: "When the pager fires, acknowledge the alert, open an incident channel and post status updates every half hour.",
  },
  { path: "ops/scaling.md", content: "Add replicas behind the load balancer when request latency climbs during traffic peaks." },
  {
    path: "dev/code-review.md",
    content: "Every pull request needs one approving reviewer and green continuous integration before merging.",
  },
  { path: "dev/flaky-tests.md", content: "Intermittent test failures are quarantined, tracked in a ticket and fixed within a sprint." },
  {
    path: "dev/dependency.md",
    content: "Pin package versions exactly and upgrade libraries in a dedicated branch with a changelog entry.",
  },
  { path: "dev/logging.md", content: "Write structured log lines as JSON with a timestamp, severity and request identifier." },
  { path: "home/bread.md", content: "Knead the dough for ten minutes, let it rise until doubled, then bake in a very hot oven." },
  { path: "home/coffee.md", content: "Grind the beans just before brewing and pour water slightly below boiling over the grounds." },
  { path: "home/plants.md", content: "Water succulents sparingly; soggy soil rots their roots, so let it dry out between waterings." },
  { path: "home/laundry.md", content: "Wash wool garments cold on a gentle cycle and lay them flat to dry so they keep their shape." },
  { path: "sport/football.md", content: "The striker scored twice in the second half and the team lifted the championship trophy." },
  { path: "sport/marathon.md", content: "Long-distance runners taper their mileage in the final weeks before race day." },
  { path: "sport/chess.md", content: "Control the centre early, develop knights before bishops and castle to protect the king." },
  { path: "sport/swimming.md", content: "Breathing every third stroke keeps the freestyle balanced on both sides." },
  { path: "health/sleep.md", content: "Adults need seven to nine hours of sleep; screens before bedtime delay drowsiness." },
  { path: "health/hydration.md", content: "Drink fluids regularly in hot weather, since thirst lags behind dehydration." },
  { path: "money/budget.md", content: "Track monthly spending by category and set aside a fixed share of income into savings." },
  { path: "money/taxes.md", content: "Keep receipts for deductible expenses and file the annual return before the deadline." },
  { path: "travel/packing.md", content: "Roll clothes instead of folding them and keep liquids in a clear pouch for airport security." },
  { path: "travel/jetlag.md", content: "Shift meals and daylight exposure toward the destination's time zone a few days ahead." },
  { path: "nature/volcano.md", content: "Magma rising beneath the crust erupts as lava, ash and gas through the volcano's vent." },
  { path: "nature/bees.md", content: "Honeybees pollinate crops and communicate the location of flowers with a waggle dance." },
];

export const PARAPHRASED_QUERIES: readonly EmbedJudgedQuery[] = [
  { query: "how should I swap out API passwords safely", relevant: "ops/key-rotation.md" },
  { query: "where do copies of our data go each evening", relevant: "ops/backups.md" },
  { query: "what to do once an outage alarm goes off", relevant: "ops/incident.md" },
  { query: "handling more users by running extra servers", relevant: "ops/scaling.md" },
  { query: "who must sign off on changes prior to landing them", relevant: "dev/code-review.md" },
  { query: "unreliable checks that sometimes pass and sometimes don't", relevant: "dev/flaky-tests.md" },
  { query: "locking third-party modules to fixed releases", relevant: "dev/dependency.md" },
  { query: "machine-readable diagnostics output format", relevant: "dev/logging.md" },
  { query: "making a homemade loaf", relevant: "home/bread.md" },
  { query: "preparing a good espresso or filter cup", relevant: "home/coffee.md" },
  { query: "caring for cactus houseplants", relevant: "home/plants.md" },
  { query: "cleaning sweaters without shrinking", relevant: "home/laundry.md" },
  { query: "soccer final result", relevant: "sport/football.md" },
  { query: "preparing for a 42 km road event", relevant: "sport/marathon.md" },
  { query: "opening strategy on a checkered board", relevant: "sport/chess.md" },
  { query: "pool technique for the crawl", relevant: "sport/swimming.md" },
  { query: "how much rest at night does a grown-up require", relevant: "health/sleep.md" },
  { query: "staying watered during a heatwave", relevant: "health/hydration.md" },
  { query: "planning household finances", relevant: "money/budget.md" },
  { query: "government levy paperwork", relevant: "money/taxes.md" },
  { query: "fitting a suitcase for a flight", relevant: "travel/packing.md" },
  { query: "coping with tiredness after crossing continents", relevant: "travel/jetlag.md" },
  { query: "molten rock exploding from a mountain", relevant: "nature/volcano.md" },
  { query: "insects that make honey and how they signal", relevant: "nature/bees.md" },
];

export const KEYWORD_QUERIES: readonly EmbedJudgedQuery[] = [
  { query: "rotating credentials revoke old secret", relevant: "ops/key-rotation.md" },
  { query: "nightly snapshots cold storage", relevant: "ops/backups.md" },
  { query: "pager alert incident channel", relevant: "ops/incident.md" },
  { query: "replicas load balancer latency", relevant: "ops/scaling.md" },
  { query: "pull request approving reviewer", relevant: "dev/code-review.md" },
  { query: "intermittent test failures quarantined", relevant: "dev/flaky-tests.md" },
  { query: "pin package versions changelog", relevant: "dev/dependency.md" },
  { query: "structured log lines JSON severity", relevant: "dev/logging.md" },
  { query: "knead dough rise bake", relevant: "home/bread.md" },
  { query: "grind beans brewing water", relevant: "home/coffee.md" },
  { query: "water succulents soggy soil roots", relevant: "home/plants.md" },
  { query: "wash wool garments gentle cycle", relevant: "home/laundry.md" },
  { query: "striker scored championship trophy", relevant: "sport/football.md" },
  { query: "runners taper mileage race day", relevant: "sport/marathon.md" },
  { query: "knights bishops castle king", relevant: "sport/chess.md" },
  { query: "breathing third stroke freestyle", relevant: "sport/swimming.md" },
  { query: "hours of sleep screens bedtime", relevant: "health/sleep.md" },
  { query: "drink fluids thirst dehydration", relevant: "health/hydration.md" },
  { query: "monthly spending category savings", relevant: "money/budget.md" },
  { query: "receipts deductible expenses annual return", relevant: "money/taxes.md" },
  { query: "roll clothes liquids airport security", relevant: "travel/packing.md" },
  { query: "daylight exposure time zone destination", relevant: "travel/jetlag.md" },
  { query: "magma crust lava ash vent", relevant: "nature/volcano.md" },
  { query: "honeybees pollinate waggle dance", relevant: "nature/bees.md" },
];
