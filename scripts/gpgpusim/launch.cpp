// One kernel launch under GPGPU-Sim (PTX mode), without nvcc: this program does by hand what nvcc's host
// pass emits (__cudaRegisterFatBinary, __cudaRegisterFunction, __cudaRegisterVar, the call configuration,
// cudaLaunchKernel). It links against NVIDIA's libcudart.so.11.0; at run time GPGPU-Sim's library of the
// same name is found first (LD_LIBRARY_PATH from GPGPU-Sim's setup_environment), and the PTX reaches it
// through the cuobjdump stand-in (build.sh), which serves $RECONVERGE_GSIM_PTX.
//
// usage: launch SPEC, where SPEC has one directive per line (sizes in bytes; scalars as little-endian hex):
//   kernel NAME                          the entry's PTX name
//   grid X Y Z | block X Y Z | shared N  launch shape and dynamic shared memory
//   arg scalar HEX                       a parameter's bytes
//   arg file PATH                        a device buffer holding the raw bytes of PATH; its address is passed
//   arg zeros N                          a zero-filled device buffer of N bytes
//   global NAME const|global SIZE file PATH    a module variable filled from PATH's bytes
//   global NAME const|global SIZE pointer PATH a 64-bit pointer variable set to a new buffer of PATH's bytes
//   dump I PATH                          after the launch, buffer argument I's bytes are written to PATH
// Written for scripts/gpgpusim/run.py, which prepares the files; errors go to stderr with exit status 1.
#include <cuda_runtime_api.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
void **__cudaRegisterFatBinary(void *fat);
void __cudaRegisterFatBinaryEnd(void **handle);
void __cudaRegisterFunction(void **handle, const char *host, char *device, const char *name, int limit, uint3 *tid,
                            uint3 *bid, dim3 *bdim, dim3 *gdim, int *wsize);
void __cudaRegisterVar(void **handle, char *host, char *device, const char *name, int ext, size_t size, int constant,
                       int global);
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, void *stream);
}

namespace {

struct Wrapper {
  int magic, version;
  const void *data, *file;
};
Wrapper fatbin = {0x466243b1, 1, nullptr, nullptr};

[[noreturn]] void fail(const std::string &why) {
  std::fprintf(stderr, "launch: %s\n", why.c_str());
  std::exit(1);
}

void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) fail(std::string(what) + " returned " + std::to_string(static_cast<int>(e)));
}

std::vector<char> read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read " + path);
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<char> from_hex(const std::string &hex) {
  std::vector<char> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

void *device_buffer(const std::vector<char> &bytes, size_t size) {
  void *d = nullptr;
  check(cudaMalloc(&d, size ? size : 1), "cudaMalloc");
  std::vector<char> data(bytes);
  data.resize(size ? size : 1, 0);
  check(cudaMemcpy(d, data.data(), data.size(), cudaMemcpyHostToDevice), "cudaMemcpy to the device");
  return d;
}

struct Arg {
  std::string kind, what;
  std::vector<char> bytes;
  void *device = nullptr;
};

struct Global {
  std::string name, space, kind, path;
  size_t size = 0;
  std::vector<char> host;
};

}  // namespace

int main(int argc, char **argv) {
  // Register before anything else is allocated and freed: GPGPU-Sim 4.0 reads its configuration here, and two
  // of its fields (power_config::g_use_nonlinear_model, gpu_nonlinear_model_config) are never set by an
  // option, so they hold whatever the heap held; on fresh pages that is zero, on recycled ones it crashed.
  void **handle = __cudaRegisterFatBinary(&fatbin);
  if (argc != 2) fail("usage: launch SPEC");
  std::ifstream spec(argv[1]);
  if (!spec) fail(std::string("cannot read ") + argv[1]);
  std::string kernel, line;
  dim3 grid(1, 1, 1), block(1, 1, 1);
  size_t shared = 0;
  std::vector<Arg> args;
  std::vector<Global> globals;
  std::vector<std::pair<size_t, std::string>> dumps;
  while (std::getline(spec, line)) {
    std::istringstream in(line);
    std::string word;
    if (!(in >> word) || word[0] == '#') continue;
    if (word == "kernel") in >> kernel;
    else if (word == "grid") in >> grid.x >> grid.y >> grid.z;
    else if (word == "block") in >> block.x >> block.y >> block.z;
    else if (word == "shared") in >> shared;
    else if (word == "arg") {
      Arg a;
      in >> a.kind >> a.what;
      args.push_back(a);
    } else if (word == "global") {
      Global g;
      in >> g.name >> g.space >> g.size >> g.kind >> g.path;
      globals.push_back(g);
    } else if (word == "dump") {
      size_t i;
      std::string path;
      in >> i >> path;
      dumps.push_back({i, path});
    } else fail("unknown directive " + word);
  }
  if (kernel.empty()) fail("no kernel");
  static char host_handle;
  __cudaRegisterFunction(handle, &host_handle, const_cast<char *>(kernel.c_str()), kernel.c_str(), -1, nullptr,
                         nullptr, nullptr, nullptr, nullptr);
  for (Global &g : globals) {
    g.host.assign(g.size, 0);
    __cudaRegisterVar(handle, g.host.data(), const_cast<char *>(g.name.c_str()), g.name.c_str(), 0, g.size,
                      g.space == "const", 0);
  }
  __cudaRegisterFatBinaryEnd(handle);
  for (Global &g : globals) {
    std::vector<char> bytes;
    if (g.kind == "file") bytes = read_file(g.path);
    else if (g.kind == "pointer") {
      std::vector<char> data = read_file(g.path);
      void *d = device_buffer(data, data.size());
      bytes.assign(reinterpret_cast<char *>(&d), reinterpret_cast<char *>(&d) + sizeof d);
    } else fail("unknown global kind " + g.kind);
    if (bytes.size() > g.size) bytes.resize(g.size);
    check(cudaMemcpyToSymbol(g.host.data(), bytes.data(), bytes.size(), 0, cudaMemcpyHostToDevice),
          "cudaMemcpyToSymbol");
  }
  std::vector<void *> params(args.size());
  for (size_t i = 0; i < args.size(); i++) {
    Arg &a = args[i];
    if (a.kind == "scalar") {
      a.bytes = from_hex(a.what);
      params[i] = a.bytes.data();
    } else {
      std::vector<char> data;
      size_t size = 0;
      if (a.kind == "file") {
        data = read_file(a.what);
        size = data.size();
      } else if (a.kind == "zeros") size = std::stoull(a.what);
      else fail("unknown argument kind " + a.kind);
      a.bytes.resize(size);
      a.device = device_buffer(data, size);
      params[i] = &a.device;
    }
  }
  __cudaPushCallConfiguration(grid, block, shared, nullptr);
  check(cudaLaunchKernel(&host_handle, grid, block, params.data(), shared, nullptr), "cudaLaunchKernel");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  for (const auto &d : dumps) {
    if (d.first >= args.size() || !args[d.first].device) fail("dump: argument " + std::to_string(d.first) + " is not a buffer");
    Arg &a = args[d.first];
    check(cudaMemcpy(a.bytes.data(), a.device, a.bytes.size(), cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
    std::ofstream out(d.second, std::ios::binary);
    out.write(a.bytes.data(), static_cast<std::streamsize>(a.bytes.size()));
    if (!out) fail("cannot write " + d.second);
  }
  std::printf("launch: done\n");
  return 0;
}
