"""Prompt assembly (`assembly`, pure packing; `services`, gathering from the apps below
through their selectors), the context API and the playground. Above the pipeline."""
