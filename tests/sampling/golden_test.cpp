// placeholder, replaced once the goldens exist
