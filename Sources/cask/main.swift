print("cask")
