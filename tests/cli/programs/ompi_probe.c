/* An Open MPI program for the tests of gantry's PMIx server, as mpi_probe
 * is MPICH's. Without an argument each rank prints, in one line, what the
 * launcher gave it:
 *
 *     rank=R size=S appnum=A local_size=L sum=X
 *
 * (A: MPI_COMM_WORLD's MPI_APPNUM, -1 if absent; L: the size of its
 * MPI_COMM_TYPE_SHARED communicator; X: an allreduce of rank + 1).
 * With an argument, one of:
 *
 *     abort N   rank 1 (rank 0 if alone) calls MPI_Abort(MPI_COMM_WORLD, N);
 *               the others wait in a barrier
 *     cpus      each rank prints rank=R cpus=<its Cpus_allowed_list>
 *     kill      rank 1 kills itself with SIGKILL; the others wait in a barrier
 *     loop N    N allreduces of one int; rank 0 prints loop=N seconds=T
 *     time      rank 0 prints init_to_finalize_ms=T, from main's start to the
 *               end of MPI_Finalize
 */
#include <mpi.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void hello(int rank, int size) {
    int* appnum = NULL;
    int has_appnum = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &has_appnum);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    int local_size = 0;
    MPI_Comm_size(local, &local_size);
    MPI_Comm_free(&local);
    int one_based = rank + 1;
    int sum = 0;
    MPI_Allreduce(&one_based, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank=%d size=%d appnum=%d local_size=%d sum=%d\n", rank, size,
           has_appnum ? *appnum : -1, local_size, sum);
}

static void cpus(int rank) {
    char line[4096];
    const char* list = "?";
    FILE* status = fopen("/proc/self/status", "r");
    while (status && fgets(line, sizeof line, status))
        if (strncmp(line, "Cpus_allowed_list:\t", 19) == 0) {
            line[strcspn(line, "\n")] = '\0';
            list = line + 19;
            break;
        }
    printf("rank=%d cpus=%s\n", rank, list);
    if (status)
        fclose(status);
}

static void loop(int rank, int iterations) {
    int one = 1;
    int sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < iterations; ++i)
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    const double seconds = MPI_Wtime() - start;
    if (rank == 0)
        printf("loop=%d seconds=%.6f\n", iterations, seconds);
}

int main(int argc, char** argv) {
    const double start = now_ms();
    MPI_Init(&argc, &argv);
    int rank = 0;
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char* mode = argc > 1 ? argv[1] : "";
    const int number = argc > 2 ? atoi(argv[2]) : 0;
    const int victim = size > 1 ? 1 : 0;
    if (strcmp(mode, "abort") == 0) {
        if (rank == victim)
            MPI_Abort(MPI_COMM_WORLD, number);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(mode, "kill") == 0) {
        if (rank == victim)
            raise(SIGKILL);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(mode, "cpus") == 0) {
        cpus(rank);
    } else if (strcmp(mode, "loop") == 0) {
        loop(rank, number);
    } else if (argc == 1) {
        hello(rank, size);
    } else if (strcmp(mode, "time") != 0) {
        fprintf(stderr, "ompi_probe: unknown mode \"%s\"\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fflush(stdout);
    MPI_Finalize();
    if (strcmp(mode, "time") == 0 && rank == 0)
        printf("init_to_finalize_ms=%.1f\n", now_ms() - start);
    return 0;
}
