/* fake_lanes.h: what fake_device.c hands to the lanes of fake_lanes.c (not for tests). */
#ifndef VAST_TEST_FAKE_LANES_H
#define VAST_TEST_FAKE_LANES_H

#include "fake_device.h"

enum fake_op_kind { FAKE_OP_H2D, FAKE_OP_D2H, FAKE_OP_COPY };

/* Queues one operation on the ordered lane (unordered: the other one). ticket != NULL: the
 * caller waits for it through fake_lanes_wait_ticket; slot: a staging slot transfer
 * (fail_ticket_after applies when it runs, tickets_out counts it). For FAKE_OP_COPY, host is
 * the source chunk's memory + src offset. */
int fake_lanes_submit(struct fake_device *d, int unordered, enum fake_op_kind kind,
                      struct fake_chunk *chunk, size_t off, void *host, size_t n, int slot,
                      void **ticket);
int fake_lanes_wait(struct fake_device *d);
int fake_lanes_wait_ticket(struct fake_device *d, void *ticket);
/* And what fake_lanes.c takes from fake_device.c. Fault countdown: -1 never fails; n > 0 lets
 * n calls pass; 0 fails (and stays 0). */
int fake_fault(_Atomic long *counter);
/* What every read does before its bytes move: staged through pinned slots when the host
 * memory is not pinned (then *rc is the result and it returns 1), the fault countdown and
 * bounds (*rc = VAST_PC_ERR_TRANSFER, returns 1), the counters (returns 0: move the bytes). */
int fake_read_begin(struct fake_device *d, struct fake_chunk *c, size_t off, void *host, size_t n,
                    vast_host_pin pin, int *rc);
/* Runs and frees whatever is left, frees the lanes. */
void fake_lanes_fini(struct fake_device *d);

#endif
