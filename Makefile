# gantry's entry points. `make demo` and `make check` do all the set-up.
JOBS ?= 2
FUZZ_SECONDS ?= 60
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

.PHONY: all deps build demo check test check-asan bench fuzz format clean

all: build

deps:
	@scripts/deps.sh

build/build.ninja: | deps
	cmake -S . -B build -G Ninja $(CMAKE_FLAGS)

build: deps build/build.ninja
	cmake --build build -j$(JOBS)

demo: build
	@scripts/demo.sh build/gantry

test: build
	cd build && ctest --output-on-failure -j$(JOBS)

build-asan/build.ninja: | deps
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGANTRY_SANITIZE=ON -DGANTRY_BENCH=OFF

check-asan: deps build-asan/build.ninja
	cmake --build build-asan -j$(JOBS)
	cd build-asan && ctest --output-on-failure -j$(JOBS)

check: test check-asan
	@scripts/check-format.sh

build-fuzz/build.ninja: | deps
	CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGANTRY_FUZZ=ON

fuzz: deps build-fuzz/build.ninja
	cmake --build build-fuzz -j$(JOBS)
	@scripts/fuzz.sh build-fuzz $(FUZZ_SECONDS)

bench: build
	@scripts/bench.sh build

format:
	@scripts/check-format.sh --fix

clean:
	rm -rf build build-asan build-fuzz
