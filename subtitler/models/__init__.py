"""Models a user can get: the catalog, downloads, hardware detection, validation, first run.

Engine-side only (no Qt). Modules import their heavy dependencies (huggingface_hub, llama_cpp,
ctranslate2) inside the functions that need them.
"""
