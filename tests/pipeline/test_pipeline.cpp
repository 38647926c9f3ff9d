#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "core/backend/backend.h"
#include "core/codegen/cpu/cpp_codegen.h"
#include "core/codegen/cuda/cuda_codegen.h"
#include "core/frontend/model_loader.h"
#include "core/pipeline/pipeline.h"
#include "core/pipeline/stage_table.h"
#include "test_util.h"

using namespace fusebox;

TEST(Pipeline, StepsThroughTrainingStagesInOrder) {
  PipelineConfig cfg;
  cfg.train = true;
  Pipeline p(loadModel("mlp"), cfg);
  EXPECT_EQ(p.nextStage(), Stage::Trace);
  EXPECT_THROW(p.traced(), Error);
  ASSERT_TRUE(p.step());
  EXPECT_TRUE(p.done(Stage::Trace));
  EXPECT_EQ(p.nextStage(), Stage::Joint);
  ASSERT_TRUE(p.step());
  EXPECT_GT(p.joint().graph.nodes().size(), p.traced().nodes().size());
  ASSERT_TRUE(p.step());
  EXPECT_FALSE(p.partition().report.saved.empty());
  ASSERT_TRUE(p.step());
  EXPECT_EQ(p.prims().size(), 2u);
  EXPECT_EQ(p.nextStage(), Stage::Lower);
  p.runAll();
  EXPECT_FALSE(p.step());
  ASSERT_EQ(p.timings().size(), 7u);
  EXPECT_EQ(p.timings()[3].stage, Stage::Decompose);
  EXPECT_EQ(p.loops().size(), 2u);
  EXPECT_EQ(p.schedules().size(), 2u);
  EXPECT_EQ(p.modules().size(), 2u);
}

TEST(Pipeline, InferenceSkipsAutograd) {
  Pipeline p(loadModel("layernorm_gelu"), PipelineConfig{});
  p.runAll();
  EXPECT_EQ(p.timings().size(), 5u);  // trace, decompose, lower, schedule, codegen
  EXPECT_EQ(p.prims().size(), 1u);
  EXPECT_THROW(p.joint(), Error);
  EXPECT_EQ(parseStage("decompose"), Stage::Decompose);
  EXPECT_FALSE(parseStage("fuse").has_value());
}

TEST(Pipeline, RunUntilStopsAtTheStage) {
  PipelineConfig cfg;
  cfg.train = true;
  cfg.partitioner = Partitioner::Default;
  Pipeline p(loadModel("lenet"), cfg);
  p.runUntil(Stage::Joint);
  EXPECT_TRUE(p.done(Stage::Joint));
  EXPECT_FALSE(p.done(Stage::Partition));
  p.runUntil(Stage::Partition);
  EXPECT_EQ(p.partition().report.partitioner, Partitioner::Default);
  EXPECT_EQ(p.partition().report.recomputedOps, 0u);
}

// The stage table is keyed by Stage, in pipeline order, and says which stages a config runs.
TEST(StageTable, RowsInStageOrderAndWhichApply) {
  ASSERT_EQ(stageTable().size(), static_cast<size_t>(kNumStages));
  std::set<std::string> names;
  for (int i = 0; i < kNumStages; ++i) {
    const StageDescriptor& d = stageTable()[static_cast<size_t>(i)];
    EXPECT_EQ(d.stage, static_cast<Stage>(i));
    EXPECT_EQ(parseStage(d.name), d.stage);
    EXPECT_TRUE(names.insert(d.name).second) << d.name;
    EXPECT_LT(d.pane, static_cast<int>(graphPanes().size())) << d.name;
  }
  PipelineConfig infer, train;
  train.train = true;
  std::vector<std::string> inferStages, trainStages;
  for (const StageDescriptor& d : stageTable()) {
    if (d.applies(infer)) inferStages.push_back(d.name);
    if (d.applies(train)) trainStages.push_back(d.name);
  }
  EXPECT_EQ(inferStages, (std::vector<std::string>{"trace", "decompose", "lower", "schedule", "codegen"}));
  EXPECT_EQ(trainStages.size(), 7u);
  EXPECT_EQ(stageDescriptor(Stage::Partition).graphs(train), (std::vector<std::string>{"forward", "backward"}));
  EXPECT_EQ(stageDescriptor(Stage::Codegen).graphs(infer), (std::vector<std::string>{"inference"}));
  EXPECT_EQ(stageDescriptor(Stage::Joint).pane, stageDescriptor(Stage::Partition).pane);  // one autograd pane
  EXPECT_EQ(stageDescriptor(Stage::Lower).pane, -1);
}

// What the pipeline ran matches the table: the stages that apply, and the graphs named as it says.
TEST(StageTable, PipelineProducesTheGraphsTheTableNames) {
  for (bool train : {false, true}) {
    PipelineConfig cfg;
    cfg.train = train;
    Pipeline p(loadModel("mlp"), cfg);
    p.runAll();
    std::vector<Stage> ran;
    for (const StageTiming& t : p.timings()) ran.push_back(t.stage);
    std::vector<Stage> want;
    for (const StageDescriptor& d : stageTable())
      if (d.applies(cfg)) want.push_back(d.stage);
    EXPECT_EQ(ran, want);
    for (const StageDescriptor& d : stageTable()) {
      if (!d.applies(cfg) || d.output != StageOutput::Graphs) continue;
      std::vector<std::string> names;
      for (const NamedGraph& g : p.stageGraphs(d.stage)) names.push_back(g.name);
      EXPECT_EQ(names, d.graphs(cfg)) << d.name;
    }
    for (size_t i = 0; i < p.prims().size(); ++i) EXPECT_EQ(p.graphName(i), primGraphNames(cfg).at(i));
    EXPECT_THROW(p.stageGraphs(Stage::Lower), Error);
  }
}

// One table of backends: every target by name, an unknown one is an error naming the known ones.
TEST(Backends, TableFindsEveryTargetAndRefusesOthers) {
  std::vector<std::string> names;
  for (const Backend* b : backends()) {
    names.push_back(b->name());
    EXPECT_EQ(&findBackend(b->name()), b);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"cpu", "cuda"}));
  EXPECT_EQ(names.front(), PipelineConfig{}.target);  // the default target is the first row
  EXPECT_EQ(backendNames(), "cpu or cuda");
  test::expectThrowContaining<Error>([] { findBackend("tpu"); }, "unknown target 'tpu' (available: cpu, cuda)");
  PipelineConfig cfg;
  cfg.target = "tpu";
  test::expectThrowContaining<Error>([&] { Pipeline p(loadModel("mlp"), cfg); }, "unknown target 'tpu'");
}

// The codegen stage makes the configured target's modules (one per prim graph); another target's
// come from the same schedules when asked for, once, and equal what its printer makes.
TEST(Backends, CodegenProducesTheConfiguredTargetsModules) {
  for (const char* target : {"cpu", "cuda"}) {
    PipelineConfig cfg;
    cfg.train = true;
    cfg.target = target;
    Pipeline p(loadModel("mlp"), cfg);
    EXPECT_THROW(p.modules(), Error);  // not generated yet
    p.runAll();
    ASSERT_EQ(p.modules().size(), 2u);
    EXPECT_EQ(&p.backend(), &findBackend(target));
    for (const GeneratedModule& m : p.modules()) EXPECT_EQ(m.target, target);
    for (const Backend* b : backends()) {
      const std::vector<GeneratedModule>& mods = p.modules(b->name());
      EXPECT_EQ(&mods, &p.modules(b->name()));  // kept, not generated again
      for (size_t i = 0; i < mods.size(); ++i) {
        GeneratedModule fresh = b->generate(p.loops()[i], p.schedules()[i], [&](NodeId id) { return p.describeTracedNode(id); });
        EXPECT_EQ(mods[i].source, fresh.source) << b->name() << " " << p.graphName(i);
        ASSERT_EQ(mods[i].kernels.size(), fresh.kernels.size());
        ASSERT_FALSE(mods[i].kernels.empty());
        for (const KernelLines& k : mods[i].kernels) {
          EXPECT_LE(k.firstLine, k.lastLine) << k.name;
          EXPECT_LT(k.kernel, static_cast<int>(p.schedules()[i].kernels.size())) << k.name;
        }
      }
    }
    EXPECT_EQ(p.modules("cpu")[0].as<CppModule>().source, p.modules("cpu")[0].source);
    EXPECT_EQ(p.modules("cuda")[0].as<CudaModule>().source, p.modules("cuda")[0].source);
    EXPECT_THROW(p.modules("cuda")[0].as<CppModule>(), Error);
  }
}

// A config change re-runs from the first stage it affects and keeps the ones before; what it
// produces is what a fresh pipeline with that config produces.
TEST(Pipeline, ReconfigureRerunsFromTheFirstAffectedStage) {
  PipelineConfig base;
  base.train = true;
  auto changed = [&](auto edit) {
    PipelineConfig c = base;
    edit(c);
    return firstStageAffected(base, c);
  };
  EXPECT_EQ(changed([](PipelineConfig&) {}), std::nullopt);
  EXPECT_EQ(changed([](PipelineConfig& c) { c.schedule.fusion = false; }), Stage::Schedule);
  EXPECT_EQ(changed([](PipelineConfig& c) { c.partitioner = Partitioner::Default; }), Stage::Partition);
  EXPECT_EQ(changed([](PipelineConfig& c) { c.target = "cuda"; }), Stage::Codegen);
  EXPECT_EQ(changed([](PipelineConfig& c) { c.train = false; }), Stage::Trace);
  EXPECT_EQ(changed([](PipelineConfig& c) { c.trace.dims["B"] = 3; }), Stage::Trace);

  for (auto edit : std::vector<std::function<void(PipelineConfig&)>>{
           [](PipelineConfig& c) { c.schedule.fusion = false; }, [](PipelineConfig& c) { c.partitioner = Partitioner::Default; },
           [](PipelineConfig& c) { c.train = false; }}) {
    PipelineConfig next = base;
    edit(next);
    Pipeline p(loadModel("mlp_gelu_ln"), base);
    p.runAll();
    const Graph* traced = &p.traced();
    std::optional<Stage> from = p.reconfigure(next);
    ASSERT_TRUE(from);
    EXPECT_EQ(p.nextStage(), from);
    if (*from != Stage::Trace) EXPECT_EQ(&p.traced(), traced) << "the trace is kept";
    for (const StageTiming& t : p.timings()) EXPECT_LT(static_cast<int>(t.stage), static_cast<int>(*from));
    p.runAll();
    Pipeline fresh(loadModel("mlp_gelu_ln"), next);
    fresh.runAll();
    ASSERT_EQ(p.modules().size(), fresh.modules().size());
    for (size_t i = 0; i < p.modules().size(); ++i) EXPECT_EQ(p.modules()[i].source, fresh.modules()[i].source) << stageName(*from);
  }
  Pipeline p(loadModel("mlp"), base);
  p.runAll();
  PipelineConfig bad = base;
  bad.target = "tpu";
  EXPECT_THROW(p.reconfigure(bad), Error);
  EXPECT_FALSE(p.nextStage()) << "nothing forgotten";
}

// Min-cut rematerialization is visible at every stage after the partition: the backward nodes
// the report lists as recomputed are marked, their prims and loop-IR ops are, and the generated
// code's op list stars them. The default partitioner recomputes nothing and marks nothing.
TEST(Pipeline, RecomputedOpsAreMarkedFromPartitionToCode) {
  for (Partitioner part : {Partitioner::MinCut, Partitioner::Default}) {
    PipelineConfig cfg;
    cfg.train = true;
    cfg.partitioner = part;
    cfg.trace.dims = {{"N", 4}};
    Pipeline p(loadModel("mlp_gelu_ln"), cfg);
    p.runAll();
    const PartitionReport& report = p.partition().report;
    auto marked = [](const Graph& g) {
      size_t n = 0;
      for (const Node& node : g.nodes()) n += node.recomputed;
      return n;
    };
    EXPECT_EQ(marked(p.partition().forward), 0u);
    EXPECT_EQ(marked(p.partition().backward), report.recomputedOps);
    size_t loopMarks = 0;
    for (const LoopNode& n : p.loops().at(1).nodes)
      for (const PrimUse& u : n.prims) loopMarks += u.recomputed;
    for (const LoopNode& n : p.loops().at(0).nodes)
      for (const PrimUse& u : n.prims) EXPECT_FALSE(u.recomputed) << "the forward recomputes nothing";
    const std::string& backwardCode = p.modules("cpu").at(1).source;
    if (part == Partitioner::MinCut) {
      EXPECT_GT(report.recomputedOps, 0u);
      EXPECT_GT(marked(p.prims().at(1)), 0u);
      EXPECT_GT(loopMarks, 0u);
      EXPECT_NE(backwardCode.find("(* recomputed from the forward)"), std::string::npos);
    } else {
      EXPECT_EQ(report.recomputedOps, 0u);
      EXPECT_EQ(loopMarks, 0u);
      EXPECT_EQ(backwardCode.find("recomputed"), std::string::npos);
    }
  }
}
