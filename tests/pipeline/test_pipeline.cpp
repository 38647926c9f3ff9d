#include <gtest/gtest.h>

#include "core/frontend/model_loader.h"
#include "core/pipeline/pipeline.h"

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
  EXPECT_EQ(p.cppModules().size(), 2u);
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
