// Package replayengine replays an imported recording ([replay.Recording])
// under a context policy, without a model: harness bench and harness replay
// measure policies with it.
//
// [Replay] rebuilds the conversation round by round, runs every recorded
// result through a policy's per-call guards (a ToolFunc that returns the
// recorded result), builds the request view the policy would have sent for
// every recorded model call (harness.BuildView plus the policy's view
// policies) and measures it: input tokens (o200k), cached tokens (the
// byte-identical prefix shared with the previous request, in whole
// messages), evidence characters, and whether the evidence the agent went
// on to use was still visible or recoverable ([Needles]).
package replayengine
