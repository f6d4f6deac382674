/* libFuzzer target for the evidence log's reader (evidence_verify(), used
 * by paddock evidence verify on a file anyone may have edited). The key and
 * session are fixed (tests/data/evidence holds logs written under them);
 * the first 8 bytes, when present, are a checkpoint sequence number. The
 * same bytes go to the witness's readers (evidence_witness_parse(), the
 * record's checkpoints and the second witness's, judged against each other
 * by evidence_witness_judge(), and evidence_checkpoint_events(), the
 * supervisor log's), and to the export's (evidence_export_json() and the deny list's
 * markers and scan), and to evidence_reconcile() as log and ledger.
 *   make fuzz FUZZ=evidence */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../evidence/evidence.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

const unsigned char fuzz_evidence_key[EVIDENCE_KEY_LEN] = {0x70, 0x61, 0x64, 0x64,
							   0x6f, 0x63, 0x6b};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evidence_report r;
	uint64_t seq = 0;
	char *copy;

	if (size > (1u << 20))
		return 0;
	if (size >= 8) {
		memcpy(&seq, data, 8);
		seq %= 64;
		data += 8;
		size -= 8;
	}
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	evidence_verify(copy, size, fuzz_evidence_key, "fuzz", seq,
			"0000000000000000000000000000000000000000000000000000000000000000", &r);
	{
		struct evidence_witness *w = malloc(sizeof(*w));
		struct evidence_checkpoint *cp = malloc(4 * sizeof(*cp));

		/* A second witness (evidence.witness) is read the same way,
		 * and judged against the checkpoints it gave. */
		if (w && evidence_witness_parse(copy, size, w) == 0 && w->n) {
			const struct evidence_checkpoint *a = &w->cp[0], *b = &w->cp[w->n - 1];

			if (evidence_witness_find(w, a->source) != a ||
			    evidence_witness_judge(a->seq, a->head, w->sequenced, a, a) !=
				EVIDENCE_AGREE)
				abort(); /* a checkpoint agrees with itself at its own end */
			(void)evidence_witness_judge(seq, a->head, true, a, b);
			(void)evidence_witness_judge(seq, b->head, false, b, NULL);
		}
		if (cp)
			evidence_checkpoint_events(copy, size, cp, 4);
		free(w);
		free(cp);
	}
	{
		/* The export's rewrite and its deny list, on the same bytes. */
		struct evidence_markers m = {0};
		char *out = NULL;

		if (evidence_export_json(copy, size, fuzz_evidence_key, &out) == 0) {
			evidence_markers_add_text(&m, copy, size, true, NULL);
			evidence_markers_add_text(&m, copy, size, false, NULL);
			evidence_markers_scan(&m, out, strlen(out));
		}
		free(out);
		evidence_markers_free(&m);
	}
	{
		/* The reconciliation: the bytes as the log and as the ledger. */
		struct evidence_reconciled *rc = malloc(sizeof(*rc));

		if (rc) {
			evidence_reconcile(copy, size, copy, size, false, rc);
			evidence_reconcile(copy, size, NULL, 0, true, rc);
		}
		free(rc);
	}
	free(copy);
	return 0;
}
