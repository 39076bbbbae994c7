"""Answers: a question over a searcher, written by Claude, Gemini or extractively.

- :mod:`.answerer`: ``VideoAnswerer`` and ``AskOptions``: search, then generate, then
  check every citation against what was retrieved;
- :mod:`.prompts`, :mod:`.images`, :mod:`.citations`, :mod:`.extractive`: what the model
  is shown, the frames sent with it, the citation check, the answer without a model;
- :mod:`.chat_llm`, :mod:`.claude`, :mod:`.gemini_llm`, :mod:`.gemini_messages`: the
  multimodal chat LLMs (the SDKs called directly).

Search itself is :mod:`llama_index_video.search`.
"""
