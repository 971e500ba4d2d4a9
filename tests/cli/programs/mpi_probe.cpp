// An MPI program for the launch tests: each rank prints, in one line, what
// the launcher gave it (rank, size, appnum, node-local size, an Allreduce
// sum) so that a test can compare the lines with the map.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int* appnum = nullptr;
    int has_appnum = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &has_appnum);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    int local_size = 0;
    MPI_Comm_size(local, &local_size);
    int one_based = rank + 1;
    int sum = 0;
    MPI_Allreduce(&one_based, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    std::printf("rank=%d size=%d appnum=%d local_size=%d sum=%d\n", rank, size,
                has_appnum ? *appnum : -1, local_size, sum);
    std::fflush(stdout);
    MPI_Comm_free(&local);
    // argv[1] = "abort": rank 1 calls MPI_Abort(…, 7) after the others are done.
    if (argc > 1 && argv[1][0] == 'a' && rank == 1)
        MPI_Abort(MPI_COMM_WORLD, 7);
    if (argc > 1 && argv[1][0] == 'a')
        MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
