/* fuzz_ollama.c - libFuzzer harness for the Ollama adapter (providers/ollama.c):
 * the harness of fuzz_cohere.c (modes and checks described there) over
 * sy_adapter_ollama, whose streams are NDJSON. */
#define FUZZ_ADAPTER sy_adapter_ollama
#define FUZZ_MODEL   "llama3.2"
#include "fuzz_cohere.c"
