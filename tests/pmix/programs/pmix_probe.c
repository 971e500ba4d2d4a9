/* A PMIx client: prints what the server tells a task, one line per task,
 * then puts a key, fences with its data, and reads the key of the next
 * rank. `abort N` makes the last rank call PMIx_Abort with N after the
 * fence; `exit` makes it exit without PMIx_Finalize. `nofence` reads,
 * without a fence, the key of rank + size/2 (on the other node of a job of
 * two nodes: direct modex), prints `fence=none`, then fences, so that no
 * node's tasks end before every get is answered. In `noput`, rank size/2
 * puts nothing and rank 0 alone reads its key (the others print
 * `next=skip`): it gets nothing once rank size/2 has ended. (A get of a
 * key a task of this node has not committed yet is not waited for by the
 * server: no mode reads one.) */
#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pmix_proc_t self;

static pmix_value_t* get(pmix_rank_t rank, const char* key) {
    pmix_proc_t proc;
    PMIX_PROC_LOAD(&proc, self.nspace, rank);
    pmix_value_t* value = NULL;
    if (PMIx_Get(&proc, key, NULL, 0, &value) != PMIX_SUCCESS)
        return NULL;
    return value;
}

static unsigned long get_number(pmix_rank_t rank, const char* key) {
    pmix_value_t* value = get(rank, key);
    unsigned long number = (unsigned long)-1;
    if (value) {
        switch (value->type) {
            case PMIX_UINT32: number = value->data.uint32; break;
            case PMIX_UINT16: number = value->data.uint16; break;
            case PMIX_PROC_RANK: number = value->data.rank; break;
            default: break;
        }
        PMIX_VALUE_RELEASE(value);
    }
    return number;
}

static void get_text(pmix_rank_t rank, const char* key, char* out, size_t size) {
    pmix_value_t* value = get(rank, key);
    snprintf(out, size, "%s", value && value->type == PMIX_STRING ? value->data.string : "-");
    if (value)
        PMIX_VALUE_RELEASE(value);
}

int main(int argc, char** argv) {
    if (PMIx_Init(&self, NULL, 0) != PMIX_SUCCESS) {
        fprintf(stderr, "pmix_probe: PMIx_Init failed\n");
        return 1;
    }
    const unsigned long size = get_number(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE);
    char peers[256], host[256], locality[256];
    get_text(PMIX_RANK_WILDCARD, PMIX_LOCAL_PEERS, peers, sizeof peers);
    get_text(self.rank, PMIX_HOSTNAME, host, sizeof host);
    get_text(self.rank, PMIX_LOCALITY_STRING, locality, sizeof locality);

    const int noput = argc > 1 && strcmp(argv[1], "noput") == 0;
    if (!noput || self.rank != size / 2) {
        char key_value[64];
        snprintf(key_value, sizeof key_value, "from-%u", self.rank);
        pmix_value_t put;
        PMIX_VALUE_LOAD(&put, key_value, PMIX_STRING);
        PMIx_Put(PMIX_GLOBAL, "probe.key", &put);
        PMIX_VALUE_DESTRUCT(&put);
        PMIx_Commit();
    }
    const int fence = !noput && !(argc > 1 && strcmp(argv[1], "nofence") == 0);
    pmix_info_t collect;
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    const pmix_status_t fenced = fence ? PMIx_Fence(NULL, 0, &collect, 1) : PMIX_SUCCESS;
    char next[64] = "skip";
    const unsigned long other = fence ? self.rank + 1 : self.rank + size / 2;
    if (!noput || self.rank == 0)
        get_text(other % size, "probe.key", next, sizeof next);

    printf("rank=%u size=%lu appnum=%lu local_size=%lu local_rank=%lu node_rank=%lu nodeid=%lu "
           "peers=%s host=%s fence=%s next=%s locality=%s\n",
           self.rank, size, get_number(self.rank, PMIX_APPNUM),
           get_number(PMIX_RANK_WILDCARD, PMIX_LOCAL_SIZE), get_number(self.rank, PMIX_LOCAL_RANK),
           get_number(self.rank, PMIX_NODE_RANK), get_number(self.rank, PMIX_NODEID), peers, host,
           fence ? PMIx_Error_string(fenced) : "none", next, locality);
    fflush(stdout);
    if (!fence && !noput)
        PMIx_Fence(NULL, 0, NULL, 0);
    if (argc > 2 && strcmp(argv[1], "abort") == 0 && self.rank == size - 1)
        PMIx_Abort(atoi(argv[2]), "pmix_probe aborts", NULL, 0);
    if (argc > 1 && strcmp(argv[1], "exit") == 0 && self.rank == size - 1)
        return 0;
    PMIx_Finalize(NULL, 0);
    return 0;
}
