"""The private Gemini layer under both Gemini classes of the package.

:class:`~llama_index_video.embeddings.gemini.GeminiMultimodalEmbedding` and
:class:`~llama_index_video.answering.gemini_llm.GeminiMultimodalLLM` stand on it,
so neither reaches into the other:

- :mod:`.client`: which environment variables hold the key, loading google-genai
  lazily, and building the SDK client with the package's timeout and retry options;
- :mod:`.transport`: how requests reach the API (retries, Files API uploads, batch
  jobs), written once for the sync and the async client.

Nothing here is public API: names may change in any release.
"""
