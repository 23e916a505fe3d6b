import Cask
