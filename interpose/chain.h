/*
 * chain.h: identical launches that follow each other on an in-order queue run partition by
 * partition together (design: chain.c's file comment). Used by launch.c (submission, the
 * members' runs), pipeline.c (how many launches each partition runs) and the executor's
 * submission hook.
 */
#ifndef VAST_INTERPOSE_CHAIN_H
#define VAST_INTERPOSE_CHAIN_H

#include "object.h"

#include <stdbool.h>
#include <stddef.h>

struct vast_chain;
struct vast_launch_cmd;
struct vast_paged;
struct vast_partition;

/* Under the executor's submission lock, right after the launch `cmd` of queue q was ordered
 * as the queue's virtual command number `seq`: it joins the queue's open chain when it is
 * the same launch as its leader and nothing came between, else it leads a new chain. */
void vast_chain_submitted(struct vast_launch_cmd *cmd, cl_command_queue q, uint64_t seq);

/* The leader's run: whether its plan may carry the chain (what is known without scanning the
 * plan: vast_chain_may_carry), and, once a member has joined, whether every page a launch
 * writes is in one partition's set only (vast_chain_disjoint: a packed set walked run by run,
 * an unpacked one as its bytemap). Then, from the pipeline, the launches partition `step` of the
 * first pass runs (the leader and every member so far: 1 + members), the end of the first
 * pass (no member joins after it; returns how many partitions the second pass runs again, for
 * members that joined late) and the members the second pass runs on partition `step` of it. */
bool vast_chain_may_carry(const struct vast_paged *r, const struct vast_partition *parts, size_t nparts);
bool vast_chain_disjoint(const struct vast_paged *r, const struct vast_partition *parts, size_t nparts);
size_t vast_chain_take(struct vast_chain *c, size_t step);
size_t vast_chain_close_pass(struct vast_chain *c);
size_t vast_chain_again(struct vast_chain *c, size_t step);

/* A merged device's leader (merge.c), before any partition: the chain takes no member any more
 * and every member so far runs every partition (the member devices claim partitions out of
 * order, so none could join at a partition and get the ones it missed later). Returns the
 * launches each partition runs: 1 + the members. */
size_t vast_chain_close_all(struct vast_chain *c);

/* The leader's run has ended with `err`: the chain takes no member any more; the members it
 * ran report err (they ran with it), the others run on their own. Every launch that leads a
 * chain calls this, whether it carried the chain or not. */
void vast_chain_end(struct vast_launch_cmd *cmd, bool carried, cl_int err);

/* A member's own run: whether its leader ran it already, and with what result. */
bool vast_chain_ran(const struct vast_launch_cmd *cmd, cl_int *result);

/* The chain a launch leads (NULL: it leads none, or is a member). */
struct vast_chain *vast_chain_led(const struct vast_launch_cmd *cmd);

/* Drop a launch's or a queue's reference (a leader's ends its chain, if its run did not). */
void vast_chain_cmd_free(struct vast_launch_cmd *cmd);
void vast_chain_queue_free(cl_command_queue q);

#endif
