"""Prompt assembly (`assembly`, pure packing; `services`, gathering from the apps below
through their selectors) and the context API; the playground page is
apps/dashboard/playground's. Above the pipeline."""
